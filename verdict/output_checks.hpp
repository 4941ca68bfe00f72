// Checks on a kernel's output before it is judged, for outputs that arrive from outside the pipeline (an external
// program's file, the Python API's tensors): its shape and dtype, and the fixture fingerprint it names.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fixtures/problem.hpp"
#include "fixtures/tensor.hpp"

namespace moe {

// 16 lower-case hex digits: how reports and output files name a fixture fingerprint.
std::string fingerprint_hex(std::uint64_t f);

// An output of p is [tokens, hidden] in p's output dtype; anything else is bad input naming `where` and `key`.
void check_output_tensor(const std::vector<std::int64_t>& shape, DType dtype, const ProblemSpec& p,
                         const std::string& where, const std::string& key);

}  // namespace moe
