// Named element formats for the CLI and case files: one place that maps a user's spelling to a codec.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace moe {

enum class ElementFormat : std::uint8_t { e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0, e2m1 };

std::optional<ElementFormat> parse_element_format(std::string_view name);
std::string_view element_format_name(ElementFormat f);
std::string_view element_format_names_list();
int element_format_code_count(ElementFormat f);  // 256, or 16 for e2m1
float element_format_decode(ElementFormat f, std::uint32_t code);

}  // namespace moe
