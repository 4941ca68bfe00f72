// SHA-256 (FIPS 180-4) of a byte string, as 64 lowercase hex digits: the fingerprint a table lock records for each
// table file (table_lock.hpp).
#pragma once
#include <string>
#include <string_view>

namespace moe {

std::string sha256_hex(std::string_view bytes);

}  // namespace moe
