// Which kernels the GPU launcher runs (kernels/gpu/dispatch_plan.hpp: plain host code, so this runs on the CPU
// machine): the grouped path where every row length holds whole 16-byte chunks of the routed format, 2 or 8 tokens
// per pass, matrix instructions where the build has them; and the report's variant spelled from the plan alone.
// Expected values are worked out by hand from the model shapes in the comments.
#include <gtest/gtest.h>

#include <cstdlib>

#include "fixtures/error.hpp"
#include "kernels/gpu/dispatch_plan.hpp"

namespace moe::gpu {
namespace {

ProblemSpec shape(std::int64_t tokens, std::int64_t hidden, std::int64_t inter, std::int64_t experts, int topk,
                  WeightFormat f, int n_shared = 0, std::int64_t shared_inter = 0) {
  ProblemSpec p;
  p.tokens = tokens;
  p.hidden = hidden;
  p.inter = inter;
  p.experts = experts;
  p.topk = topk;
  p.quant.weight = f;
  p.n_shared = n_shared;
  p.shared_inter = shared_inter;
  return p;
}

// The case's first (or only) launch.
LaunchPlan first(const ProblemSpec& p, BuildCaps build = {}, const DispatchOptions& o = {}) {
  return plan(p, build, o).launches.at(0);
}
bool grouped(const ProblemSpec& p) { return first(p).path == StagePath::grouped; }  // no mma kernels built
int tokens_per_pass(const ProblemSpec& p, const DispatchOptions& o = {}) { return first(p, {}, o).tokens_per_pass; }
bool on_mma(const ProblemSpec& p, bool built, const DispatchOptions& o = {}) {
  return first(p, {built, false}, o).path == StagePath::grouped_mma;
}
bool on_decode_mma(const ProblemSpec& p, bool built, const DispatchOptions& o = {}) {
  return first(p, {false, built}, o).path == StagePath::grouped_mma_decode;
}

TEST(GroupedDispatch, ChunkWidthIsSixteenBytesOfTheFormat) {
  EXPECT_EQ(chunk_width(WeightFormat::bf16), 8);   // 16 B / 2 B
  EXPECT_EQ(chunk_width(WeightFormat::fp16), 8);
  EXPECT_EQ(chunk_width(WeightFormat::fp8_tensor), 16);  // 16 B / 1 B
  EXPECT_EQ(chunk_width(WeightFormat::fp8_channel), 16);
  EXPECT_EQ(chunk_width(WeightFormat::fp8_block), 16);
  EXPECT_EQ(chunk_width(WeightFormat::mxfp8), 16);
  EXPECT_EQ(chunk_width(WeightFormat::mxfp4), 32);  // 16 B / 0.5 B: one MX block
}

TEST(GroupedDispatch, GroupedWhereEveryRowHoldsWholeChunks) {
  EXPECT_TRUE(grouped(shape(16, 2048, 768, 128, 8, WeightFormat::bf16)));          // Qwen3-30B-A3B
  EXPECT_TRUE(grouped(shape(16, 2880, 2880, 128, 4, WeightFormat::mxfp4)));        // GPT-OSS-120B: 2880 = 90 * 32
  EXPECT_FALSE(grouped(shape(11, 196, 100, 16, 4, WeightFormat::bf16)));           // 196 = 24 * 8 + 4
  EXPECT_TRUE(grouped(shape(12, 264, 256, 16, 4, WeightFormat::bf16)));            // 264 = 33 * 8
  EXPECT_FALSE(grouped(shape(12, 264, 256, 16, 4, WeightFormat::fp8_channel)));    // 264 = 16 * 16 + 8
  EXPECT_FALSE(grouped(shape(9, 256, 256, 16, 4, WeightFormat::bf16, 1, 60)));     // shared inter 60 = 7 * 8 + 4
  EXPECT_FALSE(grouped(shape(4, 256, 256, 16, 4, WeightFormat::mxfp4, 1, 48)));    // shared inter 48 = 32 + 16
  ProblemSpec one = shape(4, 256, 256, 16, 4, WeightFormat::bf16);
  one.stage = StageMode::one_stage;
  EXPECT_FALSE(grouped(one));
}

TEST(GroupedDispatch, TwoTokensPerPassWhereTheListedSetsAverageAtMostTwoSlots) {
  // Qwen3-30B decode T=16: 128 slots, min(128 sets, 128) listed -> 1 a set.
  EXPECT_EQ(tokens_per_pass(shape(16, 2048, 768, 128, 8, WeightFormat::bf16)), 2);
  // DeepSeek-V3 TP8 decode T=4 with one shared expert: 4 * 9 = 36 slots over min(257, 36) -> 1.
  EXPECT_EQ(tokens_per_pass(shape(4, 7168, 256, 256, 8, WeightFormat::bf16, 1, 256)), 2);
  // T=32 over 128 experts, top-8: 256 slots, 128 listed -> exactly 2.
  EXPECT_EQ(tokens_per_pass(shape(32, 2048, 768, 128, 8, WeightFormat::bf16)), 2);
  // T=33: 264 slots > 2 * 128.
  EXPECT_EQ(tokens_per_pass(shape(33, 2048, 768, 128, 8, WeightFormat::bf16)), 8);
  // DeepSeek-V3 prefill T=4096: 32768 slots over 256 sets.
  EXPECT_EQ(tokens_per_pass(shape(4096, 7168, 256, 256, 8, WeightFormat::bf16)), 8);
  // The benchmark's A/B switch forces 8; auto is the rule; any other value is refused (bad input), not ignored.
  const DispatchOptions eight = parse_dispatch_options({"grouped_tokens_per_pass=8"});
  EXPECT_EQ(tokens_per_pass(shape(16, 2048, 768, 128, 8, WeightFormat::bf16), eight), 8);
  const DispatchOptions automatic = parse_dispatch_options({"grouped_tokens_per_pass=8", "grouped_tokens_per_pass=auto"});
  EXPECT_EQ(tokens_per_pass(shape(16, 2048, 768, 128, 8, WeightFormat::bf16), automatic), 2);
  EXPECT_THROW(parse_dispatch_options({"grouped_tokens_per_pass=4"}), Error);
}

// Matrix instructions take the 8-token passes only where their operands are exact: 16-bit weights with the input
// and the intermediate in that same type, no activation quantization, rows a multiple of 32, and a build that has
// the kernels (not AMD yet, not the mutant build).
TEST(GroupedDispatch, MatrixInstructionsWhereTheOperandsAreTheWeightsSixteenBitType) {
  const ProblemSpec prefill = shape(4096, 7168, 256, 256, 8, WeightFormat::bf16);  // DeepSeek-V3 TP8 prefill
  EXPECT_TRUE(on_mma(prefill, true));
  EXPECT_FALSE(on_mma(prefill, false));                                           // an AMD or mutant build
  EXPECT_FALSE(on_mma(shape(16, 2048, 768, 128, 8, WeightFormat::bf16), true));  // decode: 2 tokens per pass
  ProblemSpec f16 = shape(8192, 2048, 128, 256, 8, WeightFormat::fp16);
  EXPECT_FALSE(on_mma(f16, true));  // f16 weights, bf16 input (the default) and intermediate
  f16.input_dtype = DType::f16;
  f16.intermediate = IntermediateDtype::f16;
  EXPECT_TRUE(on_mma(f16, true));
  ProblemSpec mid32 = prefill;
  mid32.intermediate = IntermediateDtype::f32;  // an fp32 intermediate is no bf16 operand
  EXPECT_FALSE(on_mma(mid32, true));
  ProblemSpec in32 = prefill;
  in32.input_dtype = DType::f32;
  EXPECT_FALSE(on_mma(in32, true));
  EXPECT_FALSE(on_mma(shape(4096, 7168, 256, 256, 8, WeightFormat::fp8_block), true));
  ProblemSpec quant = prefill;
  quant.quant.act = ActFormat::fp8_token;
  EXPECT_FALSE(on_mma(quant, true));
  EXPECT_FALSE(on_mma(shape(4096, 264, 256, 256, 8, WeightFormat::bf16), true));  // 264 = 8 * 32 + 8
  EXPECT_FALSE(on_mma(shape(4096, 256, 200, 256, 8, WeightFormat::bf16), true));  // inter 200 = 6 * 32 + 8
  ProblemSpec shared = shape(4096, 7168, 256, 256, 8, WeightFormat::bf16, 1, 256);
  EXPECT_TRUE(on_mma(shared, true));
  shared.shared_quant.weight = WeightFormat::fp8_channel;  // a shared expert in another format
  EXPECT_FALSE(on_mma(shared, true));
  ProblemSpec shared72 = shape(4096, 7168, 256, 256, 8, WeightFormat::bf16, 1, 72);  // 72 = 2 * 32 + 8
  EXPECT_FALSE(on_mma(shared72, true));
  EXPECT_FALSE(on_mma(prefill, true, parse_dispatch_options({"grouped_mma=off"})));  // the benchmark's A/B switch
  EXPECT_TRUE(on_mma(prefill, true, parse_dispatch_options({"grouped_mma=on"})));
}

// The few-token passes of quantized weights take matrix instructions in a build that has them: fp8 or MX weights in
// every set (the shared expert in the routed format), 2 tokens per pass (decode), H and every inter a multiple of
// 32 (whole MX blocks and 32-column lane slices); any input type or activation quantization.
TEST(GroupedDispatch, DecodeMatrixInstructionsForQuantizedWeightsAtTwoTokensPerPass) {
  const ProblemSpec oss = shape(16, 2880, 2880, 128, 4, WeightFormat::mxfp4);  // GPT-OSS-120B decode: 64 slots
  EXPECT_TRUE(on_decode_mma(oss, true));
  EXPECT_FALSE(on_decode_mma(oss, false));  // an AMD or mutant build
  for (WeightFormat f : {WeightFormat::fp8_tensor, WeightFormat::fp8_channel, WeightFormat::fp8_block, WeightFormat::mxfp8})
    EXPECT_TRUE(on_decode_mma(shape(16, 2048, 768, 128, 8, f), true)) << int(f);  // Qwen3-30B-A3B decode
  EXPECT_FALSE(on_decode_mma(shape(16, 2048, 768, 128, 8, WeightFormat::bf16), true));  // 16-bit weights: FMA kernels
  EXPECT_FALSE(on_decode_mma(shape(16, 2048, 768, 128, 8, WeightFormat::fp16), true));
  EXPECT_FALSE(on_decode_mma(shape(33, 2048, 768, 128, 8, WeightFormat::fp8_block), true));  // 8 tokens per pass
  ProblemSpec quant = shape(16, 2048, 768, 128, 8, WeightFormat::fp8_block);
  quant.quant.act = ActFormat::fp8_group128;
  quant.input_dtype = DType::f16;
  EXPECT_TRUE(on_decode_mma(quant, true));
  EXPECT_FALSE(on_decode_mma(shape(16, 2064, 768, 128, 8, WeightFormat::fp8_block), true));  // 2064 = 64 * 32 + 16
  EXPECT_FALSE(on_decode_mma(shape(16, 2048, 784, 128, 8, WeightFormat::fp8_channel), true));  // 784 = 24 * 32 + 16
  ProblemSpec shared = shape(4, 7168, 256, 256, 8, WeightFormat::fp8_block, 1, 256);  // DeepSeek-V3 TP8 decode
  EXPECT_FALSE(on_decode_mma(shared, true));  // shape() leaves the shared set bf16: another format
  shared.shared_quant.weight = WeightFormat::fp8_block;
  EXPECT_TRUE(on_decode_mma(shared, true));
  shared.shared_inter = 272;  // 8 * 32 + 16
  EXPECT_FALSE(on_decode_mma(shared, true));
  ProblemSpec one = oss;
  one.stage = StageMode::one_stage;
  EXPECT_FALSE(on_decode_mma(one, true));
  EXPECT_FALSE(on_decode_mma(oss, true, parse_dispatch_options({"decode_mma=off"})));  // the benchmark's A/B switch
}

// A shared expert on a separate path is a launch of its own, after the routed one, each with its own path, and
// only on EP rank 0 (the other ranks run no shared expert).
TEST(GroupedDispatch, ASeparateSharedPathIsASecondLaunchWithItsOwnPath) {
  ProblemSpec p = shape(16, 2048, 768, 128, 8, WeightFormat::bf16, 1, 512);  // Qwen3-30B-A3B decode + a shared expert
  p.shared_path = SharedPath::separate;
  const Plan pl = plan(p, {true, true}, {});
  ASSERT_EQ(pl.launches.size(), 2u);
  // Routed: 128 slots over min(128 sets, 128) -> 2 tokens per pass; bf16 weights: the FMA kernels.
  EXPECT_EQ(pl.launches[0].sets, LaunchSets::routed);
  EXPECT_EQ(pl.launches[0].path, StagePath::grouped);
  EXPECT_EQ(pl.launches[0].tokens_per_pass, 2);
  // Shared alone: 16 slots in 1 set -> 8 tokens per pass; bf16, 2048 and 512 multiples of 32: matrix instructions.
  EXPECT_EQ(pl.launches[1].sets, LaunchSets::shared);
  EXPECT_EQ(pl.launches[1].path, StagePath::grouped_mma);
  EXPECT_EQ(pl.launches[1].tokens_per_pass, 8);
  EXPECT_EQ(variant(pl), "grouped-t2/atomic/bf16/shared-separate:grouped-mma");
  p.ep = 2;
  p.ep_rank = 1;
  const Plan other_rank = plan(p, {true, true}, {});
  ASSERT_EQ(other_rank.launches.size(), 1u);
  EXPECT_EQ(other_rank.launches[0].sets, LaunchSets::routed_and_shared);
}

// The inputs are prepared (and the caller allocates xq_routed / xq_shared) exactly where activations are quantized
// or the decode mma kernels read their operands from them.
TEST(GroupedDispatch, PreparedInputsForQuantizedActivationsAndTheDecodeMmaKernels) {
  const ProblemSpec oss = shape(16, 2880, 2880, 128, 4, WeightFormat::mxfp4);  // decode, act none
  EXPECT_TRUE(first(oss, {false, true}).prepare_inputs);    // grouped_mma_decode
  EXPECT_FALSE(first(oss, {false, false}).prepare_inputs);  // grouped-t2: reads x itself
  ProblemSpec q = shape(4096, 7168, 256, 256, 8, WeightFormat::fp8_block);  // prefill, 1x128 activations
  q.quant.act = ActFormat::fp8_group128;
  EXPECT_TRUE(first(q, {true, true}).prepare_inputs);
  EXPECT_EQ(first(q, {true, true}).path, StagePath::grouped);
  EXPECT_EQ(first(q).reduce, ReduceMode::fused_atomic);
  q.reduce = ReduceMode::per_k;
  EXPECT_EQ(first(q).reduce, ReduceMode::per_k);
}

// One-stage only where asked, and never with quantized activations (the intermediate is quantized between stages)
// or an inter past the kernel's shared memory.
TEST(GroupedDispatch, OneStageWhereAskedAndPossible) {
  ProblemSpec p = shape(4, 256, 256, 16, 4, WeightFormat::bf16);
  EXPECT_NE(first(p).path, StagePath::one_stage);  // auto: two-stage
  p.stage = StageMode::one_stage;
  EXPECT_EQ(first(p).path, StagePath::one_stage);
  EXPECT_EQ(first(p).tokens_per_pass, 0);
  ProblemSpec q = p;
  q.quant.act = ActFormat::fp8_token;
  EXPECT_EQ(first(q).path, StagePath::grouped);
  ProblemSpec wide = p;
  wide.inter = 6144 + 8;
  EXPECT_EQ(first(wide).path, StagePath::grouped);
}

// Every variant spelling docs/cli.md documents, from a hand-built plan alone: PATH/REDUCE/WEIGHT[+ACT] and
// /shared-separate:PATH for a second launch.
TEST(GroupedDispatch, TheVariantIsSpelledFromThePlanAlone) {
  auto one = [](StagePath path, int tpp, ReduceMode reduce, WeightFormat w, std::optional<ActFormat> act = {}) {
    Plan p;
    p.launches = {LaunchPlan{path, tpp, ReduceMode::fused_atomic, LaunchSets::routed_and_shared, false}};
    p.reduce = reduce;
    p.weight = w;
    p.quantized_act = act;
    return p;
  };
  EXPECT_EQ(variant(one(StagePath::one_stage, 0, ReduceMode::fused_atomic, WeightFormat::bf16)), "one_stage/atomic/bf16");
  EXPECT_EQ(variant(one(StagePath::row_wise, 0, ReduceMode::separate, WeightFormat::fp8_channel, ActFormat::fp8_token)),
            "two_stage/separate/fp8_channel+fp8_token");
  EXPECT_EQ(variant(one(StagePath::grouped, 2, ReduceMode::per_k, WeightFormat::fp16)), "grouped-t2/per_k/fp16");
  EXPECT_EQ(variant(one(StagePath::grouped, 8, ReduceMode::fused_atomic, WeightFormat::mxfp8, ActFormat::mxfp8)),
            "grouped-t8/atomic/mxfp8+mxfp8");
  EXPECT_EQ(variant(one(StagePath::grouped_mma, 8, ReduceMode::separate, WeightFormat::bf16)), "grouped-mma/separate/bf16");
  EXPECT_EQ(variant(one(StagePath::grouped_mma_decode, 2, ReduceMode::fused_atomic, WeightFormat::fp8_block,
                        ActFormat::fp8_group128)),
            "grouped-mma-decode/atomic/fp8_block+fp8_group128");
  Plan two = one(StagePath::grouped_mma_decode, 2, ReduceMode::per_k, WeightFormat::mxfp4);
  two.launches.push_back(LaunchPlan{StagePath::grouped, 8, ReduceMode::per_k, LaunchSets::shared, false});
  two.launches[0].sets = LaunchSets::routed;
  EXPECT_EQ(variant(two), "grouped-mma-decode/per_k/mxfp4/shared-separate:grouped-t8");
  two.launches[1].path = StagePath::row_wise;
  EXPECT_EQ(variant(two), "grouped-mma-decode/per_k/mxfp4/shared-separate:two_stage");
  EXPECT_THROW(variant(Plan{}), Error);  // a plan with no launch names nothing
}

// The A/B switches' spellings: KEY=VALUE, a later item winning; anything else is bad input (exit 2).
// What `tune` times: each choice of switches that gives the case a plan of its own, the rules first. Qwen3-30B
// decode T=16 with bf16 weights: the rules give 2 tokens per pass (the decode matrix instructions are for quantized
// weights only, so decode_mma=off changes nothing, and grouped_mma acts at 8 tokens per pass only); forcing 8 takes
// the matrix-instruction kernels, and with grouped_mma=off the FMA kernels at 8.
TEST(GroupedDispatch, TuneTimesEachChoiceThatChangesThePlanOnce) {
  const BuildCaps nvidia{true, true};
  const ProblemSpec bf16 = shape(16, 2048, 768, 128, 8, WeightFormat::bf16);
  EXPECT_EQ(distinct_dispatch_choices(bf16, nvidia, {}),
            (std::vector<std::string>{"", "grouped_tokens_per_pass=8", "grouped_tokens_per_pass=8,grouped_mma=off"}));
  // fp8 weights at the same shape: the rules take the decode matrix instructions; decode_mma=off gives grouped-t2;
  // 8 tokens per pass gives grouped-t8 (no 8-token matrix instructions for fp8), and with grouped_mma=off the same.
  const ProblemSpec fp8 = shape(16, 2048, 768, 128, 8, WeightFormat::fp8_channel);
  EXPECT_EQ(distinct_dispatch_choices(fp8, nvidia, {}),
            (std::vector<std::string>{"", "grouped_tokens_per_pass=8", "decode_mma=off"}));
  EXPECT_EQ(distinct_dispatch_choices(fp8, BuildCaps{}, {}),  // a build without matrix instructions
            (std::vector<std::string>{"", "grouped_tokens_per_pass=8"}));
  EXPECT_EQ(split_dispatch_choice("grouped_mma=off,decode_mma=off"),
            (std::vector<std::string>{"grouped_mma=off", "decode_mma=off"}));
  EXPECT_TRUE(split_dispatch_choice("").empty());
}

TEST(GroupedDispatch, DispatchOptionsParseTheDocumentedSpellingsOnly) {
  EXPECT_EQ(parse_dispatch_options({}), DispatchOptions{});
  const DispatchOptions all = parse_dispatch_options({"grouped_tokens_per_pass=8", "grouped_mma=off", "decode_mma=off"});
  EXPECT_EQ(all.tokens_per_pass, 8);
  EXPECT_FALSE(all.grouped_mma);
  EXPECT_FALSE(all.decode_mma);
  EXPECT_TRUE(parse_dispatch_options({"decode_mma=off", "decode_mma=on"}).decode_mma);
  for (const char* bad : {"grouped_mma", "grouped_mma=0", "decode_mma=", "tokens=8", "=on", "grouped_tokens_per_pass=2"}) {
    try {
      parse_dispatch_options({bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input) << bad;
      EXPECT_EQ(e.key(), "--dispatch") << bad;
      EXPECT_NE(e.fix().find("grouped_tokens_per_pass=auto|8"), std::string::npos) << bad;
    }
  }
}

// The environment variables that were the A/B switches are refused, naming the run option, so that a script still
// setting one cannot measure one path twice as an A/B.
TEST(GroupedDispatch, TheRetiredEnvironmentSwitchesAreRefusedNamingTheRunOption) {
  const std::pair<const char*, const char*> retired[] = {{"MOE_GROUPED_TOKENS_PER_PASS", "--dispatch grouped_tokens_per_pass=8"},
                                                         {"MOE_GROUPED_MMA", "--dispatch grouped_mma=off"},
                                                         {"MOE_DECODE_MMA", "--dispatch decode_mma=off"}};
  for (const auto& [var, option] : retired) unsetenv(var);
  EXPECT_NO_THROW(refuse_retired_dispatch_env());
  for (const auto& [var, option] : retired) {
    setenv(var, "0", 1);
    try {
      refuse_retired_dispatch_env();
      ADD_FAILURE() << var << " was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_EQ(e.key(), var);
      EXPECT_NE(e.fix().find(option), std::string::npos) << e.fix();
    }
    unsetenv(var);
  }
}

}  // namespace
}  // namespace moe::gpu
