// Which two-stage kernels the GPU launcher picks (kernels/moe/fused_moe.hpp: plain host functions, so this runs on
// the CPU machine): the grouped path where every row length holds whole 16-byte chunks of the routed format, and 2
// or 8 tokens per pass. Expected values are worked out by hand from the model shapes in the comments.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/moe/fused_moe.hpp"

namespace moe::gpu {
namespace {

FusedMoeArgs shape(std::int64_t tokens, std::int64_t hidden, std::int64_t inter, std::int64_t experts, int topk,
                   WFormat f, int n_shared = 0, std::int64_t shared_inter = 0) {
  FusedMoeArgs a;
  a.tokens = tokens;
  a.hidden = hidden;
  a.routed.inter = inter;
  a.local_experts = experts;
  a.topk = topk;
  a.routed.wfmt = f;
  a.n_shared = n_shared;
  a.shared.inter = shared_inter;
  return a;
}

TEST(GroupedDispatch, ChunkWidthIsSixteenBytesOfTheFormat) {
  EXPECT_EQ(chunk_width(WFormat::bf16), 8);   // 16 B / 2 B
  EXPECT_EQ(chunk_width(WFormat::f16), 8);
  EXPECT_EQ(chunk_width(WFormat::fp8_tensor), 16);  // 16 B / 1 B
  EXPECT_EQ(chunk_width(WFormat::fp8_channel), 16);
  EXPECT_EQ(chunk_width(WFormat::fp8_block), 16);
  EXPECT_EQ(chunk_width(WFormat::mxfp8), 16);
  EXPECT_EQ(chunk_width(WFormat::mxfp4), 32);  // 16 B / 0.5 B: one MX block
}

TEST(GroupedDispatch, GroupedWhereEveryRowHoldsWholeChunks) {
  EXPECT_TRUE(grouped_path(shape(16, 2048, 768, 128, 8, WFormat::bf16)));          // Qwen3-30B-A3B
  EXPECT_TRUE(grouped_path(shape(16, 2880, 2880, 128, 4, WFormat::mxfp4)));        // GPT-OSS-120B: 2880 = 90 * 32
  EXPECT_FALSE(grouped_path(shape(11, 196, 100, 16, 4, WFormat::bf16)));           // 196 = 24 * 8 + 4
  EXPECT_TRUE(grouped_path(shape(12, 264, 256, 16, 4, WFormat::bf16)));            // 264 = 33 * 8
  EXPECT_FALSE(grouped_path(shape(12, 264, 256, 16, 4, WFormat::fp8_channel)));    // 264 = 16 * 16 + 8
  EXPECT_FALSE(grouped_path(shape(9, 256, 256, 16, 4, WFormat::bf16, 1, 60)));     // shared inter 60 = 7 * 8 + 4
  EXPECT_FALSE(grouped_path(shape(4, 256, 256, 16, 4, WFormat::mxfp4, 1, 48)));    // shared inter 48 = 32 + 16
  FusedMoeArgs one = shape(4, 256, 256, 16, 4, WFormat::bf16);
  one.one_stage = true;
  EXPECT_FALSE(grouped_path(one));
}

TEST(GroupedDispatch, TwoTokensPerPassWhereTheListedSetsAverageAtMostTwoSlots) {
  unsetenv("MOE_GROUPED_TOKENS_PER_PASS");
  // Qwen3-30B decode T=16: 128 slots, min(128 sets, 128) listed -> 1 a set.
  EXPECT_EQ(grouped_tokens_per_pass(shape(16, 2048, 768, 128, 8, WFormat::bf16)), 2);
  // DeepSeek-V3 TP8 decode T=4 with one shared expert: 4 * 9 = 36 slots over min(257, 36) -> 1.
  EXPECT_EQ(grouped_tokens_per_pass(shape(4, 7168, 256, 256, 8, WFormat::bf16, 1, 256)), 2);
  // T=32 over 128 experts, top-8: 256 slots, 128 listed -> exactly 2.
  EXPECT_EQ(grouped_tokens_per_pass(shape(32, 2048, 768, 128, 8, WFormat::bf16)), 2);
  // T=33: 264 slots > 2 * 128.
  EXPECT_EQ(grouped_tokens_per_pass(shape(33, 2048, 768, 128, 8, WFormat::bf16)), 8);
  // DeepSeek-V3 prefill T=4096: 32768 slots over 256 sets.
  EXPECT_EQ(grouped_tokens_per_pass(shape(4096, 7168, 256, 256, 8, WFormat::bf16)), 8);
  // The benchmark's A/B switch forces 8; any other value is ignored.
  setenv("MOE_GROUPED_TOKENS_PER_PASS", "8", 1);
  EXPECT_EQ(grouped_tokens_per_pass(shape(16, 2048, 768, 128, 8, WFormat::bf16)), 8);
  setenv("MOE_GROUPED_TOKENS_PER_PASS", "4", 1);
  EXPECT_EQ(grouped_tokens_per_pass(shape(16, 2048, 768, 128, 8, WFormat::bf16)), 2);
  unsetenv("MOE_GROUPED_TOKENS_PER_PASS");
}

// Matrix instructions take the 8-token passes only where their operands are exact: 16-bit weights with the input
// and the intermediate in that same type, no activation quantization, rows a multiple of 32, and a build that has
// the kernels (not AMD yet, not the mutant build).
TEST(GroupedDispatch, MatrixInstructionsWhereTheOperandsAreTheWeightsSixteenBitType) {
  unsetenv("MOE_GROUPED_TOKENS_PER_PASS");
  unsetenv("MOE_GROUPED_MMA");
  const FusedMoeArgs prefill = shape(4096, 7168, 256, 256, 8, WFormat::bf16);  // DeepSeek-V3 TP8 prefill
  EXPECT_TRUE(mma_path(prefill, true));
  EXPECT_FALSE(mma_path(prefill, false));                                        // an AMD or mutant build
  EXPECT_FALSE(mma_path(shape(16, 2048, 768, 128, 8, WFormat::bf16), true));     // decode: 2 tokens per pass
  FusedMoeArgs f16 = shape(8192, 2048, 128, 256, 8, WFormat::f16);
  EXPECT_FALSE(mma_path(f16, true));  // f16 weights, bf16 input (the default) and intermediate
  f16.in_type = f16.mid_type = ElemType::f16;
  EXPECT_TRUE(mma_path(f16, true));
  FusedMoeArgs mid32 = prefill;
  mid32.mid_type = ElemType::f32;  // an fp32 intermediate is no bf16 operand
  EXPECT_FALSE(mma_path(mid32, true));
  FusedMoeArgs in32 = prefill;
  in32.in_type = ElemType::f32;
  EXPECT_FALSE(mma_path(in32, true));
  EXPECT_FALSE(mma_path(shape(4096, 7168, 256, 256, 8, WFormat::fp8_block), true));
  FusedMoeArgs quant = prefill;
  quant.routed.aq.kind = AQuant::fp8_token;
  EXPECT_FALSE(mma_path(quant, true));
  EXPECT_FALSE(mma_path(shape(4096, 264, 256, 256, 8, WFormat::bf16), true));    // 264 = 8 * 32 + 8
  EXPECT_FALSE(mma_path(shape(4096, 256, 200, 256, 8, WFormat::bf16), true));    // inter 200 = 6 * 32 + 8
  FusedMoeArgs shared = shape(4096, 7168, 256, 256, 8, WFormat::bf16, 1, 256);
  EXPECT_TRUE(mma_path(shared, true));
  shared.shared.wfmt = WFormat::fp8_channel;  // a shared expert in another format
  EXPECT_FALSE(mma_path(shared, true));
  FusedMoeArgs shared72 = shape(4096, 7168, 256, 256, 8, WFormat::bf16, 1, 72);  // 72 = 2 * 32 + 8
  EXPECT_FALSE(mma_path(shared72, true));
  setenv("MOE_GROUPED_MMA", "0", 1);  // the benchmark's A/B switch
  EXPECT_FALSE(mma_path(prefill, true));
  unsetenv("MOE_GROUPED_MMA");
}


// The few-token passes of quantized weights take matrix instructions in a build that has them: fp8 or MX weights in
// every set (the shared expert in the routed format), 2 tokens per pass (decode), H and every inter a multiple of
// 32 (whole MX blocks and 32-column lane slices); any input type or activation quantization.
TEST(GroupedDispatch, DecodeMatrixInstructionsForQuantizedWeightsAtTwoTokensPerPass) {
  unsetenv("MOE_GROUPED_TOKENS_PER_PASS");
  unsetenv("MOE_DECODE_MMA");
  const FusedMoeArgs oss = shape(16, 2880, 2880, 128, 4, WFormat::mxfp4);  // GPT-OSS-120B decode: 64 slots
  EXPECT_TRUE(decode_mma_path(oss, true));
  EXPECT_FALSE(decode_mma_path(oss, false));  // an AMD or mutant build
  for (WFormat f : {WFormat::fp8_tensor, WFormat::fp8_channel, WFormat::fp8_block, WFormat::mxfp8})
    EXPECT_TRUE(decode_mma_path(shape(16, 2048, 768, 128, 8, f), true)) << int(f);  // Qwen3-30B-A3B decode
  EXPECT_FALSE(decode_mma_path(shape(16, 2048, 768, 128, 8, WFormat::bf16), true));  // 16-bit weights: FMA kernels
  EXPECT_FALSE(decode_mma_path(shape(16, 2048, 768, 128, 8, WFormat::f16), true));
  EXPECT_FALSE(decode_mma_path(shape(33, 2048, 768, 128, 8, WFormat::fp8_block), true));  // 8 tokens per pass
  FusedMoeArgs quant = shape(16, 2048, 768, 128, 8, WFormat::fp8_block);
  quant.routed.aq.kind = AQuant::fp8_group128;
  quant.in_type = ElemType::f16;
  EXPECT_TRUE(decode_mma_path(quant, true));
  EXPECT_FALSE(decode_mma_path(shape(16, 2064, 768, 128, 8, WFormat::fp8_block), true));  // 2064 = 64 * 32 + 16
  EXPECT_FALSE(decode_mma_path(shape(16, 2048, 784, 128, 8, WFormat::fp8_channel), true));  // 784 = 24 * 32 + 16
  FusedMoeArgs shared = shape(4, 7168, 256, 256, 8, WFormat::fp8_block, 1, 256);  // DeepSeek-V3 TP8 decode
  EXPECT_FALSE(decode_mma_path(shared, true));  // shape() leaves the shared set bf16: another format
  shared.shared.wfmt = WFormat::fp8_block;
  EXPECT_TRUE(decode_mma_path(shared, true));
  shared.shared.inter = 272;  // 8 * 32 + 16
  EXPECT_FALSE(decode_mma_path(shared, true));
  FusedMoeArgs one = oss;
  one.one_stage = true;
  EXPECT_FALSE(decode_mma_path(one, true));
  setenv("MOE_DECODE_MMA", "0", 1);  // the benchmark's A/B switch
  EXPECT_FALSE(decode_mma_path(oss, true));
  unsetenv("MOE_DECODE_MMA");
}

}  // namespace
}  // namespace moe::gpu
