#include "harness/case/case_loader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "fixtures/error.hpp"

namespace moe {
namespace {
// Expects bad_input whose message names "file:LINE" and the key.
void expect_error(const std::string& yaml, int line, const std::string& key, const std::string& needle = "") {
  try {
    load_suite_text(yaml, "s.yaml");
    FAIL() << "no error; wanted key " << key;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    const std::string m = e.what();
    EXPECT_NE(m.find("s.yaml:" + std::to_string(line)), std::string::npos) << m;
    EXPECT_NE(m.find("'" + key + "'"), std::string::npos) << m;
    EXPECT_NE(m.find("Fix:"), std::string::npos) << m;
    if (!needle.empty()) {
      EXPECT_NE(m.find(needle), std::string::npos) << m;
    }
  }
}
const char* kHead = "suite: t\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2}\ncases:\n";
}  // namespace

// A key written without a value is never "take the default" (it would win silently), and two sweep axes that set
// the same key (quant and quant.weight) would let one spelling override the other.
TEST(CaseLoader, KeysWithoutValueAndOverlappingSweepAxesAreRefused) {
  expect_error(std::string(kHead) + "  - {tokens: null}\n", 4, "tokens", "has no value");
  expect_error(std::string(kHead) + "  - {tokens: ~}\n", 4, "tokens", "has no value");
  expect_error(std::string(kHead) + "  - variant: a\n    tokens:\n", 5, "tokens", "has no value");
  expect_error(std::string(kHead) + "  - {tokens: 1, quant: {weight: null}}\n", 4, "quant.weight", "has no value");
  expect_error(std::string(kHead) + "  - sweep: {quant: [fp8], quant.weight: [fp8]}\n", 4, "sweep.quant.weight", "overlaps");
  expect_error(std::string(kHead) + "  - sweep: {quant.weight: [fp8], quant: [fp8]}\n", 4, "sweep.quant", "overlaps");
  // An entry's `case:` may be empty: the sweep alone makes the cases.
  EXPECT_EQ(load_suite_text(std::string(kHead) + "  - {sweep: {tokens: [1, 2]}, case: null}\n", "s.yaml").cases.size(), 2u);
}

TEST(CaseLoader, SweepIsACartesianProductWithStableIds) {
  const Suite s = load_suite_text(std::string(kHead) + "  - sweep: {tokens: [1, 3], reduce: [atomic, per_k]}\n", "s.yaml");
  ASSERT_EQ(s.cases.size(), 4u);
  EXPECT_EQ(s.cases[0].id, "custom-h64i64e8k2-softmax_topk/tp1/bf16.a16/silu/T1/decode/atomic");
  EXPECT_EQ(s.cases[3].id, "custom-h64i64e8k2-softmax_topk/tp1/bf16.a16/silu/T3/decode/per_k");
  EXPECT_EQ(s.cases[0].source, "s.yaml:4");
}

TEST(CaseLoader, ModelPresetBeatsDefaultsAndCaseKeysBeatThePreset) {
  const Suite s = load_suite_text(std::string(kHead) + "  - {model: qwen3.5-35b-a3b, tp: 4, tokens: 3, quant: {weight: fp8_channel, act: fp8_token}}\n", "s.yaml");
  const auto& p = s.cases[0].problem;
  EXPECT_EQ(p.hidden, 2048);
  EXPECT_EQ(p.local_inter(), 128);
  EXPECT_EQ(p.experts, 256);
  EXPECT_EQ(p.n_shared, 1);
  EXPECT_EQ(s.cases[0].id, "qwen3.5-35b-a3b/tp4/fp8ch.tok+sh.fp8ch.tok/silu/T3/decode/atomic");
}

TEST(CaseLoader, TpEquivalentShapesGetDifferentIdsButTheSameLocalInter) {
  const Suite s = load_suite_text(std::string(kHead) +
      "  - {model: qwen3.5-35b-a3b, tp: 2, inter: 256, shared_inter: 256, tokens: 2}\n"
      "  - {model: qwen3.5-35b-a3b, tp: 4, tokens: 2}\n", "s.yaml");
  EXPECT_EQ(s.cases[0].problem.local_inter(), s.cases[1].problem.local_inter());
  EXPECT_NE(s.cases[0].id, s.cases[1].id);
}

// Every key that changes the problem changes the id (reports, the compare gate and bisection match cases by id):
// two cases that differ in one of them load side by side, each id spelling the difference as worked out below.
TEST(CaseLoader, EveryProblemKeyShowsInTheId) {
  const Suite s = load_suite_text(std::string(kHead) +
      "  - {tokens: 1}\n"
      "  - {tokens: 1, input_dtype: f16, output_dtype: f16, intermediate: f16, quant: {weight: fp16}}\n"
      "  - {tokens: 1, intermediate: f32}\n"
      "  - {tokens: 1, activation: swiglu_oai, swiglu: {alpha: 1.5, limit: 10}}\n"
      "  - {tokens: 1, quant: {weight: fp8_channel, act: fp8_token, amax_floor: 1e-6}}\n"
      "  - {tokens: 1, routing: {kind: grouped_sigmoid, n_group: 4, topk_group: 2, routed_scaling: 2.5}}\n"
      "  - {tokens: 1, routing: {kind: softmax_topk, renormalize: false}}\n"
      "  - {tokens: 1, input: {std: 4.0}}\n"
      "  - {tokens: 1, weight_std: 0.02}\n"
      "  - {model: deepseek-v3, tp: 8, tokens: 1, routing: {kind: grouped_sigmoid, routed_scaling: 1.0}}\n"
      "  - {tokens: 1, n_shared: 1, shared_inter: 32, shared_path: separate}\n"
      "  - {tokens: 1, routing: {edge: masked_ids}}\n", "s.yaml");
  ASSERT_EQ(s.cases.size(), 12u);
  const std::string c = "custom-h64i64e8k2-";
  EXPECT_EQ(s.cases[0].id, c + "softmax_topk/tp1/bf16.a16/silu/T1/decode/atomic");
  EXPECT_EQ(s.cases[1].id, c + "softmax_topk/tp1/fp16.a16/silu/T1/decode/atomic/in-f16/mid-f16/out-f16");
  EXPECT_EQ(s.cases[2].id, c + "softmax_topk/tp1/bf16.a16/silu/T1/decode/atomic/mid-f32");
  EXPECT_EQ(s.cases[3].id, c + "softmax_topk/tp1/bf16.a16/swiglu_oai-a1.5-l10/T1/decode/atomic");
  EXPECT_EQ(s.cases[4].id, c + "softmax_topk/tp1/fp8ch.tok-fl1e-06/silu/T1/decode/atomic");
  EXPECT_EQ(s.cases[5].id, c + "grouped_sigmoid-g4of2-rs2.5/tp1/bf16.a16/silu/T1/decode/atomic");
  EXPECT_EQ(s.cases[6].id, c + "softmax_topk-norenorm/tp1/bf16.a16/silu/T1/decode/atomic");
  EXPECT_EQ(s.cases[7].id, c + "softmax_topk/tp1/bf16.a16/silu/T1/decode/atomic/x-n0,4");
  EXPECT_EQ(s.cases[8].id, c + "softmax_topk/tp1/bf16.a16/silu/T1/decode/atomic/wstd0.02");
  // A preset's own routing (DeepSeek-V3: 8 groups, top-4 groups, scaling 2.5) is implied; an override shows.
  EXPECT_EQ(s.cases[9].id, "deepseek-v3-rs1/tp8/fp8blk.g128+sh.fp8blk.g128/silu/T1/decode/atomic");
  EXPECT_EQ(s.cases[10].id, "custom-h64i64e8k2s1x32-softmax_topk/tp1/bf16.a16+sh.bf16.a16-sep/silu/T1/decode/atomic");
  EXPECT_EQ(s.cases[11].id, c + "softmax_topk-edge.masked_ids/tp1/bf16.a16/silu/T1/decode/atomic");
}

TEST(CaseLoader, ARoutingEdgeWithoutRoomIsRefusedAtItsLine) {
  expect_error(std::string(kHead) + "  - {tokens: 1, topk: 1, routing: {edge: duplicate_id}}\n", 4, "routing.edge", "topk");
  expect_error(std::string(kHead) + "  - {tokens: 1, routing: {edge: ep_rank_empty}}\n", 4, "routing.edge", "ep");
}

TEST(CaseLoader, SeparateSharedPathNeedsASharedExpert) {
  expect_error(std::string(kHead) + "  - {tokens: 1, shared_path: separate}\n", 4, "shared_path", "n_shared");
  expect_error(std::string(kHead) + "  - {tokens: 1, n_shared: 1, shared_inter: 32, shared_path: beside}\n", 4,
               "shared_path", "fused");
}

TEST(CaseLoader, UnknownKeyNamesLineKeyAndTheKnownKeys) {
  expect_error(std::string(kHead) + "  - {tokens: 1}\n  - {tokens: 2, tokns: 3}\n", 5, "tokns", "unknown key");
}
TEST(CaseLoader, UnknownNestedKey) { expect_error(std::string(kHead) + "  - tokens: 1\n    quant: {wieght: bf16}\n", 5, "quant.wieght"); }
TEST(CaseLoader, WrongType) { expect_error(std::string(kHead) + "  - {tokens: many}\n", 4, "tokens", "whole number"); }
TEST(CaseLoader, UnknownEnumValue) { expect_error(std::string(kHead) + "  - {tokens: 1, activation: relu}\n", 4, "activation", "silu"); }
TEST(CaseLoader, TopkAboveExperts) { expect_error(std::string(kHead) + "  - {tokens: 1, topk: 9}\n", 4, "topk"); }
TEST(CaseLoader, SwigluOaiOnChunkedLayoutIsAContractMismatch) {
  expect_error(std::string(kHead) + "  - {tokens: 1, activation: swiglu_oai, layout: gate_up}\n", 4, "layout", "interleaved");
}
TEST(CaseLoader, MxNeedsKMultipleOf32) {
  expect_error(std::string(kHead) + "  - {tokens: 1, hidden: 80, quant: {weight: mxfp4}}\n", 4, "quant.weight", "32");
}
TEST(CaseLoader, InterNotDivisibleByTp) { expect_error(std::string(kHead) + "  - {tokens: 1, tp: 3}\n", 4, "tp"); }
TEST(CaseLoader, DuplicateIdsNameBothPlaces) {
  expect_error(std::string(kHead) + "  - {tokens: 1}\n  - {tokens: 1}\n", 5, "variant", "also at s.yaml:4");
}
TEST(CaseLoader, LooseningAToleranceNeedsAReason) {
  expect_error(std::string(kHead) + "  - {tokens: 1, tolerance: {min_cos: 0.9}}\n", 4, "tolerance.min_cos", "without a reason");
  const Suite ok = load_suite_text(std::string(kHead) + "  - {tokens: 1, tolerance: {min_cos: 0.9, reason: 'measured 0.93 on gfx942 (run 2026-11-30)'}}\n", "s.yaml");
  EXPECT_EQ(ok.cases.size(), 1u);
  const Suite tighter = load_suite_text(std::string(kHead) + "  - {tokens: 1, tolerance: {min_cos: 0.999999}}\n", "s.yaml");
  EXPECT_EQ(tighter.cases.size(), 1u);
}
TEST(CaseLoader, YamlSyntaxErrorHasALine) {
  try {
    load_suite_text("suite: t\ncases:\n  - {tokens: [1, 2}\n", "s.yaml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("s.yaml:3"), std::string::npos) << e.what();
  }
}
TEST(CaseLoader, UnknownModelPreset) { expect_error(std::string(kHead) + "  - {model: gpt-5, tokens: 1}\n", 4, "model", "deepseek-v3"); }

}  // namespace moe

namespace moe {
// A node of the wrong kind where the loader converts one (a mapping used as a key) is bad input at its line.
TEST(CaseLoader, MappingUsedAsAKeyIsBadInputAtItsLine) {
  try {
    load_suite_text(std::string(kHead) + "  - {tokens: 1, {a: 1}: 2}\n", "s.yaml");
    FAIL() << "accepted a mapping as a key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("s.yaml:4"), std::string::npos) << e.what();
  }
}
// 1000 x 1001 = 1,001,000 cases, just past the limit: refused before any is built.
TEST(CaseLoader, ASweepPastTheSuiteLimitIsRefusedBeforeExpanding) {
  std::string a1000 = "[1", a1001 = "[1";
  for (int i = 2; i <= 1000; ++i) a1000 += ", " + std::to_string(i);
  for (int i = 2; i <= 1001; ++i) a1001 += ", " + std::to_string(i);
  expect_error(std::string(kHead) + "  - sweep: {tokens: " + a1000 + "], seed: " + a1001 + "]}\n", 4, "sweep",
               "1000000 cases per suite");
}
}  // namespace moe

namespace moe {

TEST(CaseLoader, RoundingContractKeySetsItsPointsAndSpellsThemInTheId) {
  const Suite s = load_suite_text(std::string(kHead) +
                                      "  - {tokens: 2, rounding_contract: 'slot=bf16,gate_up=bf16'}\n"
                                      "  - {tokens: 2, rounding_contract: 'reduce=f16', pin_rounding_contract: true}\n"
                                      "  - {tokens: 2, rounding_contract: default}\n",
                                  "s.yaml");
  ASSERT_EQ(s.cases.size(), 3u);
  EXPECT_EQ(s.cases[0].problem.gate_up_dtype, IntermediateDtype::bf16);
  EXPECT_EQ(s.cases[0].problem.slot_dtype, IntermediateDtype::bf16);
  EXPECT_EQ(s.cases[0].problem.reduce_dtype, IntermediateDtype::f32);
  EXPECT_NE(s.cases[0].id.find("/gu-bf16/slot-bf16"), std::string::npos) << s.cases[0].id;
  EXPECT_FALSE(s.cases[0].pin_rounding);
  EXPECT_EQ(s.cases[1].problem.reduce_dtype, IntermediateDtype::f16);
  EXPECT_TRUE(s.cases[1].pin_rounding);
  EXPECT_NE(s.cases[1].id.find("/sum-f16/pinned"), std::string::npos) << s.cases[1].id;
  EXPECT_EQ(s.cases[2].id.find("/gu-"), std::string::npos) << s.cases[2].id;  // default: today's id
}

TEST(CaseLoader, RoundingContractKeyRefusesBadTextAndPointsThatHaveTheirOwnKey) {
  expect_error(std::string(kHead) + "  - {tokens: 2, rounding_contract: 'gate_up=bf8'}\n", 4, "rounding_contract",
               "does not take 'bf8'");
  expect_error(std::string(kHead) + "  - {tokens: 2, rounding_contract: 'sum=bf16'}\n", 4, "rounding_contract",
               "unknown rounding point 'sum'");
  expect_error(std::string(kHead) + "  - {tokens: 2, rounding_contract: 'act=f16'}\n", 4, "rounding_contract",
               "intermediate");
  expect_error(std::string(kHead) + "  - {tokens: 2, rounding_contract: 'output=f32'}\n", 4, "rounding_contract",
               "output_dtype");
  expect_error(std::string(kHead) + "  - {tokens: 2, pin_rounding_contract: maybe}\n", 4, "pin_rounding_contract");
  expect_error(std::string(kHead) + "  - {tokens: 2, rounding_contract: 'token_scale_form=reciprocal'}\n", 4,
               "rounding_contract", "token_scale_form does not take 'reciprocal'");
}

TEST(CaseLoader, ScaleFormPointsReachTheirSchemesAndTheId) {
  const Suite s = load_suite_text(
      std::string(kHead) +
          "  - {tokens: 2, rounding_contract: 'token_scale_form=qmax_reciprocal', quant: {weight: fp8_channel, act: fp8_token}}\n"
          "  - {tokens: 2, rounding_contract: 'group_scale_form=qmax_reciprocal', quant: {weight: fp8_block, act: fp8_group128}}\n",
      "s.yaml");
  ASSERT_EQ(s.cases.size(), 2u);
  EXPECT_EQ(s.cases[0].problem.quant.act_scale_form, ActScaleForm::qmax_reciprocal);
  EXPECT_NE(s.cases[0].id.find("/tokform-qmax_reciprocal"), std::string::npos) << s.cases[0].id;
  EXPECT_EQ(s.cases[1].problem.quant.act_scale_form, ActScaleForm::qmax_reciprocal);
  EXPECT_NE(s.cases[1].id.find("/grpform-qmax_reciprocal"), std::string::npos) << s.cases[1].id;
}

}  // namespace moe

namespace moe {
namespace {
// Call sequences (docs/cases.md `sequence:`): the cases are steps in run order, ids "sNN/<id>", repeats allowed.
const char* kSeqHead = "suite: q\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2}\n";

TEST(CaseLoaderSequence, ScriptedStepsKeepFileOrderAndRepeatsGetTheirPosition) {
  const Suite s = load_suite_text(std::string(kSeqHead) + "sequence: {order: scripted}\ncases:\n"
                                  "  - {tokens: 4}\n  - {tokens: 1}\n  - {tokens: 4}\n", "q.yaml");
  ASSERT_TRUE(s.sequence);
  EXPECT_EQ(s.sequence_order, "scripted");
  ASSERT_EQ(s.cases.size(), 3u);
  const int tokens[] = {4, 1, 4};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(s.cases[k].problem.tokens, tokens[k]);
    ASSERT_TRUE(s.cases[k].step.has_value());
    EXPECT_EQ(s.cases[k].step->index, k);
    EXPECT_EQ(s.cases[k].step->count, 3u);
    EXPECT_EQ(s.cases[k].id.substr(0, 4), "s0" + std::to_string(k) + "/");
  }
  EXPECT_EQ(s.cases[0].id.substr(4), s.cases[2].id.substr(4));  // the same case twice, two steps
  EXPECT_FALSE(load_suite_text(std::string(kSeqHead) + "cases:\n  - {tokens: 4}\n", "q.yaml").cases[0].step);
}

// Shuffled: a permutation of the steps, the same for one seed, another for another; --sequence-seed beats the file's.
TEST(CaseLoaderSequence, ShuffledOrderIsAPermutationFixedByTheSeed) {
  std::string body = "cases:\n";
  for (int t = 1; t <= 12; ++t) body += "  - {tokens: " + std::to_string(t) + "}\n";
  auto tokens_of = [&](const std::string& seq, std::optional<std::uint64_t> over = std::nullopt) {
    std::vector<std::int64_t> v;
    for (const CaseSpec& c : load_suite_text(std::string(kSeqHead) + seq + body, "q.yaml", over).cases) v.push_back(c.problem.tokens);
    return v;
  };
  const auto a = tokens_of("sequence: {order: shuffled, seed: 5}\n");
  EXPECT_EQ(a, tokens_of("sequence: {order: shuffled, seed: 5}\n"));
  EXPECT_NE(a, tokens_of("sequence: {order: shuffled, seed: 6}\n"));
  EXPECT_EQ(tokens_of("sequence: {order: shuffled, seed: 6}\n"), tokens_of("sequence: {order: shuffled, seed: 5}\n", 6));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int t = 1; t <= 12; ++t) EXPECT_EQ(sorted[std::size_t(t - 1)], t);
  std::vector<std::int64_t> file_order(12);
  for (int t = 1; t <= 12; ++t) file_order[std::size_t(t - 1)] = t;
  EXPECT_NE(a, file_order);
  const Suite s = load_suite_text(std::string(kSeqHead) + "sequence: {order: shuffled, seed: 5}\n" + body, "q.yaml");
  EXPECT_EQ(s.cases[3].step->order, "shuffled");
  EXPECT_EQ(s.cases[3].step->seed, 5u);
}

TEST(CaseLoaderSequence, BadSequencesNameFileLineAndKey) {
  const std::string one = "cases:\n  - {tokens: 1}\n";
  expect_error(std::string(kSeqHead) + "sequence: {order: random}\n" + one, 3, "sequence.order", "random");
  expect_error(std::string(kSeqHead) + "sequence: {order: shuffled}\n" + one, 3, "sequence.seed", "missing");
  expect_error(std::string(kSeqHead) + "sequence: {order: shuffled, seed: -1}\n" + one, 3, "sequence.seed");
  expect_error(std::string(kSeqHead) + "sequence: {order: shuffled, seed: 1.5}\n" + one, 3, "sequence.seed");
  expect_error(std::string(kSeqHead) + "sequence: {order: scripted, steps: 3}\n" + one, 3, "sequence.steps");
  expect_error(std::string(kSeqHead) + "sequence: scripted\n" + one, 3, "sequence");
  expect_error(std::string(kSeqHead) + "sequence: {order: scripted}\ncases: []\n", 4, "cases", "zero steps");
}

}  // namespace
}  // namespace moe
