#include "kernels/common/output_sums.hpp"

#include <cstring>

#include "fixtures/error.hpp"
#include "fixtures/tensor_element.hpp"

namespace moe {
namespace {

float rounded(float v, DType d) {
  switch (d) {
    case DType::bf16: return round_to_bf16(v);
    case DType::f16: return round_to_fp16(v);
    default: return v;  // f32 (an output is bf16, f16 or f32)
  }
}

}  // namespace

void sum_slots_in_order(const std::vector<float>& slots, int per, const std::vector<char>& counted, Tensor& out) {
  const std::int64_t t = out.dim(0), h = out.dim(1);
  if (std::int64_t(slots.size()) != t * per * h || std::int64_t(counted.size()) != t * per)
    throw_harness_error("sum_slots_in_order", "slot rows and their mask do not match the output's tokens");
  for (std::int64_t tok = 0; tok < t; ++tok)
    for (std::int64_t col = 0; col < h; ++col) {
      float v = 0.0f;
      for (int j = 0; j < per; ++j)
        if (counted[tok * per + j]) v += slots[(tok * per + j) * h + col];
      store_element(out, tok * h + col, v);
    }
}

std::vector<char> local_slots(const ProblemSpec& p, const RoutingResult& r, int routed, int shared) {
  const int per = routed + shared;
  std::vector<char> counted(std::size_t(p.tokens * per), 1);
  for (std::int64_t tok = 0; tok < p.tokens; ++tok)
    for (int j = 0; j < routed; ++j) {
      const std::int64_t e = r.ids[tok * r.k + j] - p.first_local_expert();
      counted[tok * per + j] = e >= 0 && e < p.local_experts();
    }
  return counted;
}

float separate_paths_sum(float routed, float shared, DType out) {
  return rounded(rounded(routed, out) + rounded(shared, out), out);
}

void add_separate_shared(Tensor& out, const Tensor& shared, const Tensor& sentinel) {
  if (shared.dtype() != out.dtype() || sentinel.dtype() != out.dtype() || shared.nbytes() != out.nbytes() ||
      sentinel.nbytes() != out.nbytes())
    throw_harness_error("add_separate_shared", "the routed and shared outputs and the sentinel differ in shape or dtype");
  const std::int64_t n = out.numel();
  const std::size_t width = out.nbytes() / std::size_t(n);
  auto unwritten = [&](const Tensor& x, std::int64_t i) {
    return std::memcmp(x.bytes() + i * width, sentinel.bytes() + i * width, width) == 0;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    if (unwritten(out, i) || unwritten(shared, i)) {  // either part unwritten: the sentinel stays
      std::memcpy(out.bytes() + i * width, sentinel.bytes() + i * width, width);
      continue;
    }
    store_element(out, i, separate_paths_sum(element_as_f32(out, i), element_as_f32(shared, i), out.dtype()));
  }
}

}  // namespace moe
