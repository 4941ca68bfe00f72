// MutantKernel around a kernel that records what it was given: each input/output mutant changes exactly the input
// or output its catalog entry names (hand-computed values), in-kernel mutants pass everything through.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/mutants/mutant_kernel.hpp"

namespace moe {
namespace {

// Records the problem, routing and working clone it is given; writes 1.0f into every output element.
struct Seen {
  ProblemSpec prepared, ran;
  RoutingResult routing;
  bool biases_in_clone = false;
  DType w13_dtype = DType::u8;
};
class RecordingKernel : public KernelUnderTest {
 public:
  explicit RecordingKernel(Seen* seen) : seen_(seen) {}
  std::string id() const override { return "recorder"; }
  std::string version() const override { return "7"; }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec&, const DeviceInfo*) const override { return Support::yes(); }
  void prepare(const ProblemSpec& p, Checkpoint& working) override {
    seen_->prepared = p;
    seen_->biases_in_clone = !working.routed.w13_bias.empty() || !working.shared.w2_bias.empty();
    seen_->w13_dtype = working.routed.w13.dtype();
  }
  RunInfo run(const ProblemSpec& p, const Checkpoint&, const RoutingResult& r, Tensor& out) override {
    seen_->ran = p;
    seen_->routing = r;
    for (float& v : out.span<float>()) v = 1.0f;
    return {};
  }

 private:
  Seen* seen_;
};

ProblemSpec problem() {
  ProblemSpec p;
  p.tokens = 3; p.hidden = 2; p.experts = 4; p.topk = 2;
  return p;
}
RoutingResult routing() { return {3, 2, {3, 1, 0, 2, 2, 3}, {0.5f, 0.25f, 0.75f, 0.125f, 1.0f, 2.0f}}; }

// Runs mutant m around the recorder on problem p with the given routing and logits; returns what it saw.
Seen run_mutant(Mutation m, const ProblemSpec& p, const RoutingResult& r, Tensor* out = nullptr,
                Checkpoint* working = nullptr) {
  Seen seen;
  MutantKernel k(std::make_unique<RecordingKernel>(&seen), m);
  Checkpoint local;
  Checkpoint& c = working ? *working : local;
  Tensor own("out", DType::f32, {p.tokens, p.hidden});
  k.prepare(p, c);
  k.run(p, c, r, out ? *out : own);
  return seen;
}

TEST(MutantKernel, RouterWeightMutantsChangeTheWeightsHandedIn) {
  const ProblemSpec p = problem();
  EXPECT_EQ(run_mutant(Mutation::router_weight_dropped, p, routing()).routing.weights,
            (std::vector<float>{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(run_mutant(Mutation::router_weight_twice, p, routing()).routing.weights,
            (std::vector<float>{0.25f, 0.0625f, 0.5625f, 0.015625f, 1.0f, 4.0f}));
  ProblemSpec g = p;
  g.routing.routed_scaling = 2.5f;
  EXPECT_EQ(run_mutant(Mutation::routed_scaling_twice, g, routing()).routing.weights,
            (std::vector<float>{1.25f, 0.625f, 1.875f, 0.3125f, 2.5f, 5.0f}));
  EXPECT_EQ(run_mutant(Mutation::router_weight_twice, p, routing()).routing.ids, routing().ids);  // ids untouched
  // expert_gain_2pct: experts 2 and 3 hold two slots each; the most used, the lower id on a tie, is 2 (slots 3, 4).
  EXPECT_EQ(run_mutant(Mutation::expert_gain_2pct, p, routing()).routing.weights,
            (std::vector<float>{0.5f, 0.25f, 0.75f, 0.125f * 1.02f, 1.0f * 1.02f, 2.0f}));
  // expert_partial_gain: the same expert 2, its first slot (3) as it was, its second (4) 10% too large.
  EXPECT_EQ(run_mutant(Mutation::expert_partial_gain, p, routing()).routing.weights,
            (std::vector<float>{0.5f, 0.25f, 0.75f, 0.125f, 1.0f * 1.10f, 2.0f}));
}

// The recorder writes 1.0 into every element of the f32 output it is asked for; bf16 [2, 16] comes back.
// channel_block_gain: channels H/4 = 4 and 5 (H/8 = 2 of them) times 1.01 = 1.28 ulps of 2^-7 above 1 -> 1.0078125
// (0x3F81). token_orthogonal_3pct: token 0's alternating-sign vector is orthogonal to its all-ones row already, norm
// 4 = the row's, so +-0.03 per element: 1.03 -> 1.03125 (0x3F84, 4 ulps of 2^-7), 0.97 -> 0.96875 (0x3F78, 248 ulps
// of 2^-8); token 1 untouched (0x3F80).
TEST(MutantKernel, ChannelBlockGainAndOrthogonalTokenErrorApplyToTheUnroundedOutput) {
  ProblemSpec p = problem();
  p.tokens = 2; p.hidden = 16;
  RoutingResult r{2, 2, {0, 1, 2, 3}, {0.5f, 0.5f, 0.5f, 0.5f}};
  Tensor out("out", DType::bf16, {2, 16});
  for (std::uint16_t& b : out.span<std::uint16_t>()) b = 0x7FA5;
  run_mutant(Mutation::channel_block_gain, p, r, &out);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(out.span<std::uint16_t>()[i], i % 16 == 4 || i % 16 == 5 ? 0x3F81 : 0x3F80) << i;
  for (std::uint16_t& b : out.span<std::uint16_t>()) b = 0x7FA5;  // the harness's sentinel: what differs is written
  run_mutant(Mutation::token_orthogonal_3pct, p, r, &out);
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(out.span<std::uint16_t>()[i], i >= 16 ? 0x3F80 : i % 2 ? 0x3F78 : 0x3F84) << i;
}

TEST(MutantKernel, RoutingNotRenormalizedHandsInTheSelectedSoftmaxMass) {
  ProblemSpec p = problem();
  p.tokens = 1;
  Checkpoint c;
  c.router_logits = Tensor("router_logits", DType::f32, {1, 4});
  const float l[4] = {std::log(1.0f), std::log(2.0f), std::log(3.0f), std::log(4.0f)};  // softmax 0.1 0.2 0.3 0.4
  std::memcpy(c.router_logits.bytes(), l, sizeof l);
  const RoutingResult r{1, 2, {3, 2}, {4.0f / 7.0f, 3.0f / 7.0f}};  // renormalized over the selected 0.7
  const Seen s = run_mutant(Mutation::routing_not_renormalized, p, r, nullptr, &c);
  ASSERT_EQ(s.routing.weights.size(), 2u);
  EXPECT_NEAR(s.routing.weights[0], 0.4f, 1e-6f);
  EXPECT_NEAR(s.routing.weights[1], 0.3f, 1e-6f);
}

TEST(MutantKernel, ExpertIdMutantsRewriteTheIdsHandedIn) {
  const ProblemSpec p = problem();  // one rank: experts 0..3 local
  // token 0's first slot (expert 3) reads the next local expert, wrapping to 0; nothing else changes
  EXPECT_EQ(run_mutant(Mutation::one_token_wrong_expert, p, routing()).routing.ids,
            (std::vector<std::int32_t>{0, 1, 0, 2, 2, 3}));
  ProblemSpec ep = problem();
  ep.experts = 8; ep.ep = 2; ep.ep_rank = 1;  // local: global 4..7
  const RoutingResult r{2, 2, {0, 5, 3, 7}, {0.5f, 0.5f, 0.5f, 0.5f}};
  // 0 -> local -4 -> wrapped 0 -> global 4; 3 -> local -1 -> wrapped 3 -> global 7
  EXPECT_EQ(run_mutant(Mutation::ep_sums_nonlocal, ep, r).routing.ids, (std::vector<std::int32_t>{4, 5, 7, 7}));
  // token 0's first id (global 0) is not local: one_token_wrong_expert leaves it
  EXPECT_EQ(run_mutant(Mutation::one_token_wrong_expert, ep, r).routing.ids, r.ids);
}

TEST(MutantKernel, ProblemMutantsTellTheKernelAnotherProblemInPrepareAndRun) {
  ProblemSpec p = problem();
  p.n_shared = 1; p.clamp_shared = false; p.biases = true; p.layout = GateUpLayout::gate_up;
  Seen s = run_mutant(Mutation::shared_expert_dropped, p, routing());
  EXPECT_EQ(s.prepared.n_shared, 0);
  EXPECT_EQ(s.ran.n_shared, 0);
  EXPECT_TRUE(run_mutant(Mutation::shared_clamp_when_disabled, p, routing()).ran.clamp_shared);
  EXPECT_EQ(run_mutant(Mutation::gate_up_swapped, p, routing()).ran.layout, GateUpLayout::up_gate);
  p.layout = GateUpLayout::up_gate;
  EXPECT_EQ(run_mutant(Mutation::gate_up_swapped, p, routing()).ran.layout, GateUpLayout::gate_up);
  p.layout = GateUpLayout::interleaved;
  p.activation = Activation::swiglu_oai;
  EXPECT_EQ(run_mutant(Mutation::swiglu_chunked_split, p, routing()).ran.layout, GateUpLayout::gate_up);
  EXPECT_EQ(run_mutant(Mutation::router_weight_twice, p, routing()).ran.layout, GateUpLayout::interleaved);
}

TEST(MutantKernel, BiasesDroppedHandsInAWorkingCloneWithoutBiases) {
  ProblemSpec p = problem();
  p.biases = true;
  Checkpoint c;
  c.routed.w13_bias = Tensor("w13_bias", DType::f32, {4, 4});
  c.shared.w2_bias = Tensor("shared_w2_bias", DType::f32, {1, 2});
  Seen s = run_mutant(Mutation::none, p, routing(), nullptr, &c);
  EXPECT_TRUE(s.biases_in_clone);
  s = run_mutant(Mutation::biases_dropped, p, routing(), nullptr, &c);
  EXPECT_FALSE(s.biases_in_clone);
  EXPECT_FALSE(s.prepared.biases);
  EXPECT_FALSE(s.ran.biases);
}

TEST(MutantKernel, FnuzMutantsConvertTheWorkingCloneBeforeTheKernelSeesIt) {
  Checkpoint c;
  c.routed.w13 = Tensor("w13", DType::e4m3fn, {1, 2, 2});
  c.routed.w13_scale = Tensor("w13_scale", DType::f32, {1});
  c.routed.w2 = Tensor("w2", DType::e4m3fn, {1, 2, 1});
  c.routed.w2_scale = Tensor("w2_scale", DType::f32, {1});
  EXPECT_EQ(run_mutant(Mutation::fnuz_neg_zero_kept, problem(), routing(), nullptr, &c).w13_dtype, DType::e4m3fnuz);
}

TEST(MutantKernel, LastTokenUnwrittenKeepsTheSentinelInTheLastRowOnly) {
  const ProblemSpec p = problem();
  Tensor out("out", DType::f32, {3, 2});
  for (float& v : out.span<float>()) v = std::numeric_limits<float>::quiet_NaN();
  run_mutant(Mutation::last_token_unwritten, p, routing(), &out);
  const auto v = out.span<float>();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(v[i], 1.0f) << i;
  EXPECT_TRUE(std::isnan(v[4]) && std::isnan(v[5]));
}

TEST(MutantKernel, InKernelMutantsPassEverythingThroughAndOnlyNameTheKernel) {
  ProblemSpec p = problem();
  p.n_shared = 1;
  Seen seen;
  MutantKernel k(std::make_unique<RecordingKernel>(&seen), Mutation::bf16_accumulation);
  EXPECT_EQ(k.id(), "recorder~bf16_accumulation");
  EXPECT_EQ(k.version(), "7");
  Checkpoint c;
  Tensor out("out", DType::f32, {3, 2});
  k.prepare(p, c);
  k.run(p, c, routing(), out);
  EXPECT_EQ(seen.ran.n_shared, 1);
  EXPECT_EQ(seen.routing.weights, routing().weights);
  EXPECT_EQ(seen.routing.ids, routing().ids);
  EXPECT_EQ(MutantKernel(std::make_unique<RecordingKernel>(&seen), Mutation::none, "x~y").id(), "x~y");
}

TEST(MutantKernel, EveryCatalogMutantHasALevelAndAReason) {
  int io = 0;
  for (Mutation m : all_mutations()) {
    EXPECT_FALSE(mutant_level_reason(m).empty()) << mutation_name(m);
    io += mutant_level(m) == MutantLevel::io;
  }
  EXPECT_EQ(io, 29);  // the catalog's input/output mutants (mutation.cpp), the other 12 in-kernel
  for (Mutation m : {Mutation::bf16_accumulation, Mutation::e8m0_scale_off_by_one, Mutation::fp4_nibbles_swapped,
                     Mutation::per_tensor_act_scale, Mutation::swiglu_clamp_dropped, Mutation::lost_atomic_update,
                     Mutation::intermediate_requant_skipped, Mutation::offsets_32bit,
                     Mutation::token_position_dependent, Mutation::expert_label_dependent,
                     Mutation::intermediate_toward_zero, Mutation::gate_up_swapped_one_expert})
    EXPECT_EQ(mutant_level(m), MutantLevel::in_kernel) << mutation_name(m);
}

// Writes `value` into every element of its output but the first, in whatever dtype it is asked for; records it.
class ValueKernel : public KernelUnderTest {
 public:
  ValueKernel(float value, DType* told) : value_(value), told_(told) {}
  std::string id() const override { return "value"; }
  std::string version() const override { return "1"; }
  bool needs_device() const override { return false; }
  Support supports(const ProblemSpec&, const DeviceInfo*) const override { return Support::yes(); }
  void prepare(const ProblemSpec&, Checkpoint&) override {}
  RunInfo run(const ProblemSpec& p, const Checkpoint&, const RoutingResult&, Tensor& out) override {
    *told_ = p.output_dtype;
    for (std::int64_t i = 1; i < out.numel(); ++i) {
      if (out.dtype() == DType::f32) out.span<float>()[i] = value_;
      else out.span<std::uint16_t>()[i] = 0x1234;  // a value the output mutants below never produce
    }
    return {};
  }

 private:
  float value_;
  DType* told_;
};

// The bf16 output [2, 4] of mutant m around a kernel writing `value` everywhere but element 0, which the harness
// pre-filled with 0x7FA5 (a NaN, as its sentinel); `told`: the output dtype the kernel was asked for.
std::vector<std::uint16_t> output_of(Mutation m, float value, DType& told) {
  ProblemSpec p = problem();
  p.tokens = 2; p.hidden = 4;
  MutantKernel k(std::make_unique<ValueKernel>(value, &told), m);
  Tensor out("out", DType::bf16, {2, 4});
  for (std::uint16_t& b : out.span<std::uint16_t>()) b = 0x7FA5;
  Checkpoint c;
  k.prepare(p, c);
  k.run(p, c, routing(), out);
  return {out.span<std::uint16_t>().begin(), out.span<std::uint16_t>().end()};
}

TEST(MutantKernel, OutputGainAndTruncationApplyToTheUnroundedOutputAndKeepUnwrittenElements) {
  DType told = DType::bf16;
  // bf16 near 1.5: ulp 2^-7. 228.4 ulps (1.784375): nearest even 228 ulps = 1.78125 (0x3FE4), toward zero the same;
  // times 1.003 = 229.085 ulps -> 229 (1.7890625, 0x3FE5); times 1.03 = 235.25 ulps -> 235 (1.8359375, 0x3FEB).
  const float v = 228.4f / 128.0f;
  auto g = output_of(Mutation::output_gain_0p3pct, v, told);
  EXPECT_EQ(told, DType::f32);
  EXPECT_EQ(g[0], 0x7FA5);  // never written: still the sentinel
  for (int i = 1; i < 8; ++i) EXPECT_EQ(g[i], 0x3FE5) << i;
  g = output_of(Mutation::output_gain_3pct, v, told);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(g[i], 0x3FEB) << i;
  // 228.6 ulps (1.7859375): nearest even 229 (0x3FE5), toward zero 228 (0x3FE4); -228.6 ulps -> 0xBFE4.
  g = output_of(Mutation::output_truncated, 228.6f / 128.0f, told);
  EXPECT_EQ(g[0], 0x7FA5);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(g[i], 0x3FE4) << i;
  g = output_of(Mutation::output_truncated, -228.6f / 128.0f, told);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(g[i], 0xBFE4) << i;
}

// Offset and sparse token gain on the unrounded output, bf16 near 1.78 (ulp 2^-7): every written element is
// 228.4 ulps, so the mean |output| is that and the offset 1e-3 of it: 228.63 ulps -> 229 (0x3FE5); token 0 (of
// tokens 0, 32, ...) times 1.02: 232.97 ulps -> 233 (0x3FE9); token 1 as it was: 228 (0x3FE4).
TEST(MutantKernel, OffsetAndSparseTokenGainApplyToTheUnroundedOutput) {
  DType told = DType::bf16;
  const float v = 228.4f / 128.0f;
  auto g = output_of(Mutation::output_offset, v, told);
  EXPECT_EQ(told, DType::f32);
  EXPECT_EQ(g[0], 0x7FA5);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(g[i], 0x3FE5) << i;
  g = output_of(Mutation::sparse_token_gain, v, told);
  const std::vector<std::uint16_t> want{0x7FA5, 0x3FE9, 0x3FE9, 0x3FE9, 0x3FE4, 0x3FE4, 0x3FE4, 0x3FE4};
  EXPECT_EQ(g, want);
}

TEST(MutantKernel, OutputChannelZeroedZeroesChannelHiddenHalfOfEveryToken) {
  DType told = DType::f32;
  const auto g = output_of(Mutation::output_channel_zeroed, 0.0f, told);
  EXPECT_EQ(told, DType::bf16);  // asked for the case's own dtype
  const std::vector<std::uint16_t> want{0x7FA5, 0x1234, 0x0000, 0x1234, 0x1234, 0x1234, 0x0000, 0x1234};
  EXPECT_EQ(g, want);
}

}  // namespace
}  // namespace moe

namespace moe {
namespace {
// workspace_init_once around the recorder (every element 1.0): the workspace keeps each call's output and is cleared
// only over the first call's size, so only a larger call after a smaller first one, on one kernel object, reads
// stale elements. Hidden 2: T = 1 clears elements [0, 2); a T = 4 call's elements [2, 8) hold 0 the first time
// (never reached) and 1.0 afterwards, so the output there is 1 + 1 = 2.
TEST(MutantKernel, WorkspaceInitOnceIsLiveOnlyAfterASmallerFirstCall) {
  Seen seen;
  auto call = [](MutantKernel& k, std::int64_t tokens) {
    ProblemSpec p = problem();
    p.tokens = tokens;
    Checkpoint c;
    Tensor out("out", DType::f32, {tokens, p.hidden});
    k.prepare(p, c);
    k.run(p, c, RoutingResult{}, out);
    return std::vector<float>(out.span<float>().begin(), out.span<float>().end());
  };
  MutantKernel same(std::make_unique<RecordingKernel>(&seen), Mutation::workspace_init_once);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(call(same, 4), std::vector<float>(8, 1.0f)) << i;  // one size: clean
  EXPECT_EQ(call(same, 1), std::vector<float>(2, 1.0f));  // smaller later: inside the cleared part
  MutantKernel grown(std::make_unique<RecordingKernel>(&seen), Mutation::workspace_init_once);
  EXPECT_EQ(call(grown, 1), std::vector<float>(2, 1.0f));
  EXPECT_EQ(call(grown, 4), std::vector<float>(8, 1.0f));  // elements [2, 8) new: 0 + 1
  const std::vector<float> stale{1, 1, 2, 2, 2, 2, 2, 2};  // row 0 cleared, rows 1..3 read the call before
  EXPECT_EQ(call(grown, 4), stale);
  EXPECT_EQ(call(grown, 1), std::vector<float>(2, 1.0f));
  EXPECT_TRUE(mutation_applies(Mutation::workspace_init_once, problem()));
  EXPECT_TRUE(sequence_only(Mutation::workspace_init_once));
  EXPECT_FALSE(sequence_only(Mutation::last_token_unwritten));
}
}  // namespace
}  // namespace moe
