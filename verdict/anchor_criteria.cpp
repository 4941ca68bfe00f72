#include "verdict/anchor_criteria.hpp"

#include <cmath>

namespace moe {
namespace {

// Fraction of elements with |ref - out| > atol + rtol * |base| (NaN comparisons are false, as in the originals).
double outside(const std::vector<float>& ref, const std::vector<float>& out, double atol, double rtol, bool rel_to_out) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double left = std::fabs(double(ref[i]) - double(out[i]));
    const double right = atol + rtol * std::fabs(double(rel_to_out ? out[i] : ref[i]));
    if (left > right) ++n;
  }
  return double(n) / double(ref.size());
}

bool rtp_mean_cos(const std::vector<float>& r, const std::vector<float>& o, std::int64_t t, std::int64_t h) {
  double mean = 0;
  for (std::int64_t tok = 0; tok < t; ++tok) {
    double d = 0, rr = 0, oo = 0;
    for (std::int64_t c = 0; c < h; ++c) {
      const double a = r[tok * h + c], b = o[tok * h + c];
      d += a * b; rr += a * a; oo += b * b;
    }
    mean += d / std::sqrt(rr * oo) / double(t);
  }
  return !(mean > 0.99);
}

bool aiter_2stage(const std::vector<float>& r, const std::vector<float>& o, std::int64_t, std::int64_t) {
  double xy = 0, sq = 0;
  for (std::size_t i = 0; i < r.size(); ++i) { xy += double(r[i]) * o[i]; sq += double(r[i]) * r[i] + double(o[i]) * o[i]; }
  const double diff = 1.0 - 2.0 * xy / sq;
  return outside(r, o, 1e-2, 1e-2, false) > 0.0 && diff > 0.01;
}

bool aiter_allclose_atol100(const std::vector<float>& r, const std::vector<float>& o, std::int64_t, std::int64_t) {
  return outside(r, o, 100.0, 1e-2, false) > 0.05;
}

bool vllm_mxfp4(const std::vector<float>& r, const std::vector<float>& o, std::int64_t, std::int64_t) {
  return outside(r, o, 0.0, 0.3, true) > 1.0 - 0.80;
}

bool vllm_rocm(const std::vector<float>& r, const std::vector<float>& o, std::int64_t, std::int64_t) {
  return outside(r, o, 0.1, 0.1, true) > 1.0 - 0.70;
}

bool flashinfer_fp4(const std::vector<float>& r, const std::vector<float>& o, std::int64_t, std::int64_t) {
  return outside(r, o, 0.1, 0.85, false) > 1.0 - 0.92;
}

bool torch_bf16(const std::vector<float>& r, const std::vector<float>& o, std::int64_t, std::int64_t) {
  // torch.testing.assert_close(actual=out, expected=ref) bf16 defaults; NaN is a mismatch there (equal_nan=False).
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (std::isnan(o[i]) != std::isnan(r[i])) return true;
    if (std::fabs(double(o[i]) - r[i]) > 1e-5 + 1.6e-2 * std::fabs(double(r[i]))) return true;
  }
  return false;
}

}  // namespace

const std::vector<AnchorCriterion>& anchor_criteria() {
  static const std::vector<AnchorCriterion> c = {
      {"rtp_mean_cos", "RTP-LLM: mean per-token cosine > 0.99", rtp_mean_cos},
      {"aiter_2stage", "AITER 2-stage: fail iff any element outside rtol=atol=1e-2 AND 1-2Sxy/S(x2+y2) > 0.01", aiter_2stage},
      {"aiter_atol100", "AITER checkAllclose atol=100, 5% mismatch allowed", aiter_allclose_atol100},
      {"vllm_mxfp4", "vLLM check_accuracy rel. to kernel output: atol 0, rtol 0.3, 80%", vllm_mxfp4},
      {"vllm_rocm", "vLLM ROCm oracle rel. to kernel output: atol 0.1, rtol 0.1, 70%", vllm_rocm},
      {"flashinfer_fp4", "FlashInfer FP4: atol 0.1, rtol 0.85, 92%", flashinfer_fp4},
      {"torch_bf16", "torch.testing.assert_close bf16 defaults (rtol 1.6e-2, atol 1e-5)", torch_bf16},
  };
  return c;
}

}  // namespace moe
