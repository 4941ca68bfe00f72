// The GPU kernel's resident input copies (kernels/common/resident_inputs.hpp) on the device: one upload per tensor per
// case, a tensor changed between runs uploaded again and used, and prepare() starting the next case from nothing.
// Without a GPU each test skips and says why.
#include <gtest/gtest.h>

#include <cstring>

#include "fixtures/checkpoint.hpp"
#include "verdict/judge.hpp"
#include "kernels/gpu/gpu_fused_moe_kernel.hpp"
#include "reference/routing/routing.hpp"

namespace moe {
namespace {
ProblemSpec small_case() {
  ProblemSpec p;
  p.hidden = 256; p.inter = 256; p.experts = 16; p.topk = 4; p.tokens = 5; p.seed = 11;
  return p;
}
Tensor run_once(GpuFusedMoeKernel& k, const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r) {
  Tensor out("out", p.output_dtype, {p.tokens, p.hidden});
  fill_sentinel(out, 0);
  k.run(p, c, r, out);
  return out;
}
bool same_bytes(const Tensor& a, const Tensor& b) { return a.nbytes() == b.nbytes() && !std::memcmp(a.bytes(), b.bytes(), a.nbytes()); }
}  // namespace

TEST(GpuResidentInputs, ChangedTensorIsUploadedAgainAndUsed) {
  const DeviceDetection d = detect_device();
  if (d.query_failed) FAIL() << "GPU runtime answered but: " << d.message;
  if (!d.device) GTEST_SKIP() << "no GPU: " << d.message;
  const ProblemSpec p = small_case();
  Checkpoint c = generate_checkpoint(p);
  const RoutingResult r = route(p, c);
  GpuFusedMoeKernel k;
  k.set_timing(false);
  k.prepare(p, c);
  const Tensor first = run_once(k, p, c, r);
  const std::size_t uploads = k.input_uploads();  // x, w13, w2 (no biases, no scales at bf16)
  EXPECT_EQ(uploads, 3u);
  EXPECT_TRUE(same_bytes(run_once(k, p, c, r), first));  // a rerun reuses every copy
  EXPECT_EQ(k.input_uploads(), uploads);
  // x changed in place (same address): uploaded again, and the output is a fresh kernel's on the changed inputs.
  for (std::uint16_t& v : c.x.span<std::uint16_t>()) v ^= 0x8000;  // every sign flipped: the output changes
  const Tensor flipped = run_once(k, p, c, r);
  EXPECT_EQ(k.input_uploads(), uploads + 1);
  GpuFusedMoeKernel fresh;
  fresh.set_timing(false);
  EXPECT_TRUE(same_bytes(flipped, run_once(fresh, p, c, r)));
  EXPECT_FALSE(same_bytes(flipped, first));
  // The next case's prepare() releases the copies: its first run uploads everything it reads.
  Checkpoint next = c.clone();
  k.prepare(p, next);
  run_once(k, p, next, r);
  EXPECT_EQ(k.input_uploads(), uploads + 1 + 3);
}

}  // namespace moe
