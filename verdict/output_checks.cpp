#include "verdict/output_checks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fixtures/error.hpp"

namespace moe {

std::string fingerprint_hex(std::uint64_t f) { return fmt::format("{:016x}", f); }

void check_output_tensor(const std::vector<std::int64_t>& shape, DType dtype, const ProblemSpec& p,
                         const std::string& where, const std::string& key) {
  const std::vector<std::int64_t> want = {p.tokens, p.hidden};
  if (shape != want)
    throw_bad_input(where, key,
                    fmt::format("shape [{}] but the case needs [tokens, hidden] = [{}, {}]", fmt::join(shape, ", "),
                                p.tokens, p.hidden),
                    "compute the output from this case's fixture");
  if (dtype != p.output_dtype)
    throw_bad_input(where, key,
                    fmt::format("dtype {} but the case's output dtype is {}", dtype_name(dtype), dtype_name(p.output_dtype)),
                    "round the output to the case's output dtype (case.json dtypes.output), as the kernel contract does");
}

}  // namespace moe
