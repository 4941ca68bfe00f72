// Case files whose values are wrong in ways the schema forbids (docs/cases.md states every range): each is
// bad input naming the key at its own line, never a silently loaded case, an internal error or a crash.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/case/case_yaml.hpp"
#include "harness/case/model_presets.hpp"
#include "verdict/thresholds.hpp"

namespace moe {
namespace {
const char* kHead = "suite: t\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2}\ncases:\n";

// bad_input at "s.yaml:LINE" naming the key, with the needle in the message.
void expect_bad(const std::string& yaml, int line, const std::string& key, const std::string& needle) {
  try {
    load_suite_text(yaml, "s.yaml");
    ADD_FAILURE() << "loaded; wanted an error on " << key;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_EQ(e.where(), "s.yaml:" + std::to_string(line)) << e.what();
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_FALSE(e.fix().empty()) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not bad input (would exit 3): " << e.what();
  }
}
}  // namespace

// Block style: the error names the line of the key itself, also for ranges validate() checks on the whole case.
TEST(CaseValues, NonFiniteAndOutOfRangeValuesNameTheKeysOwnLine) {
  const std::string c = std::string(kHead) + "  - tokens: 1\n    quant:\n      weight: fp8_channel\n      act: fp8_token\n";
  expect_bad(c + "      qmax: .nan\n", 8, "quant.qmax", "not a finite number");
  expect_bad(c + "      amax_floor: 0\n", 8, "quant.amax_floor", "outside [1e-30, 1e+30]");
  expect_bad(c + "    tolerance:\n      max_rel: .inf\n      reason: measured\n", 9, "tolerance.max_rel", "not a finite");
  expect_bad(c + "    tolerance:\n      max_mismatch_fraction: 1.5\n      reason: r\n", 9,
             "tolerance.max_mismatch_fraction", "outside [0, 1]");
  expect_bad(c + "    input:\n      std: 0\n", 9, "input.std", "outside");
  expect_bad(c + "    weight_std: -1\n", 8, "weight_std", "outside");
  expect_bad(c + "    routing:\n      routed_scaling: -2.5\n", 9, "routing.routed_scaling", "outside");
}

// A NaN tolerance compares false with everything: before, `min_cos: .nan` loaded and no token could fail on cos.
TEST(CaseValues, NanTolerancesAreRefusedEvenWithAReason) {
  for (const char* k : {"min_cos", "max_rel", "atol", "rtol", "max_mismatch_fraction"})
    expect_bad(std::string(kHead) + "  - {tokens: 1, tolerance: {" + k + ": .nan, reason: measured}}\n", 4,
               std::string("tolerance.") + k, "not a finite number");
}

TEST(CaseValues, ToleranceOverridesBuiltInCodeAreCheckedToo) {
  const Thresholds base = default_thresholds(ProblemSpec{}, Tier::statistical);
  ToleranceOverride o;
  o.atol = std::numeric_limits<double>::quiet_NaN();
  o.reason = "measured";
  EXPECT_THROW(apply_override(base, o, "case"), Error);
  EXPECT_EQ(check_tolerance(o)->key, "tolerance.atol");
  o.atol = 0.001;
  EXPECT_FALSE(check_tolerance(o));
  o.min_cos = 1.5;
  EXPECT_EQ(check_tolerance(o)->key, "tolerance.min_cos");
}

// Seeds are unsigned 64-bit: the whole range loads (before: refused above 2^62), -1 and 2^64 never wrap.
TEST(CaseValues, SeedsSpanTheUnsigned64BitRangeAndNeverWrap) {
  const Suite s = load_suite_text(std::string(kHead) + "  - {tokens: 1, seed: 18446744073709551615}\n", "s.yaml");
  EXPECT_EQ(s.cases[0].problem.seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_NE(s.cases[0].id.find("/s18446744073709551615"), std::string::npos) << s.cases[0].id;
  expect_bad(std::string(kHead) + "  - {tokens: 1, seed: -1}\n", 4, "seed", "unsigned");
  expect_bad(std::string(kHead) + "  - {tokens: 1, seed: 18446744073709551616}\n", 4, "seed", "outside");
  expect_bad(std::string(kHead) + "  - {tokens: 1, seed: 0x10}\n", 4, "seed", "whole number");
}

TEST(CaseValues, IntegersAreDecimalWholeNumbersInRange) {
  expect_bad(std::string(kHead) + "  - {tokens: 2.0}\n", 4, "tokens", "whole number");
  expect_bad(std::string(kHead) + "  - {tokens: 010x}\n", 4, "tokens", "whole number");
  expect_bad(std::string(kHead) + "  - {tokens: 1, hidden: 9223372036854775808}\n", 4, "hidden", "outside");
  // One spelling per number (docs/cases.md): a '+' is refused like any other sign where the docs show none.
  expect_bad(std::string(kHead) + "  - {tokens: +3}\n", 4, "tokens", "'+'");
  const Suite s = load_suite_text(std::string(kHead) + "  - {tokens: 3}\n", "s.yaml");
  EXPECT_EQ(s.cases[0].problem.tokens, 3);
}

// Booleans documented `true | false` take those two plain scalars only (issue 48: yes, off, y, "true" and no were
// taken as YAML 1.1 truth values or strings).
TEST(CaseValues, BooleansAreTrueOrFalseUnquoted) {
  for (const char* bad : {"yes", "no", "off", "on", "y", "n", "True", "FALSE", "1", "\"true\"", "'false'", "!!str true"})
    expect_bad(std::string(kHead) + "  - {tokens: 1, pin_rounding_contract: " + bad + "}\n", 4,
               "pin_rounding_contract", "true or false");
  expect_bad(std::string(kHead) + "  - {tokens: 1, routing: {renormalize: yes}}\n", 4, "routing.renormalize",
             "true or false");
  const Suite s = load_suite_text(std::string(kHead) + "  - {tokens: 1, pin_rounding_contract: true}\n"
                                                       "  - {tokens: 1, pin_rounding_contract: false}\n", "s.yaml");
  EXPECT_TRUE(s.cases[0].pin_rounding);
  EXPECT_FALSE(s.cases[1].pin_rounding);
}

// Documented bounds are inclusive as written: amax_floor [1e-30, 1e30] holds 1e30 although float(1e30) > 1e30.
TEST(CaseValues, AmaxFloorTakesItsDocumentedBoundsAndNoHexFloat) {
  const std::string fp8 = "  - {tokens: 1, quant: {weight: fp8_channel, act: fp8_token, amax_floor: ";
  for (const char* ok : {"1e30", "9e29", "1e-30", "0.001953125"}) {
    const Suite s = load_suite_text(std::string(kHead) + fp8 + ok + "}}\n", "s.yaml");
    EXPECT_EQ(s.cases[0].problem.quant.act_amax_floor, std::stof(ok)) << ok;
  }
  expect_bad(std::string(kHead) + fp8 + "2e30}}\n", 4, "quant.amax_floor", "outside [1e-30, 1e+30]");
  expect_bad(std::string(kHead) + fp8 + "0x1p4}}\n", 4, "quant.amax_floor", "hex");
  expect_bad(std::string(kHead) + fp8 + "+1e-3}}\n", 4, "quant.amax_floor", "'+'");
}

TEST(CaseValues, ElementCountsPastInt64AndPastTheHostMemoryAreBadInput) {
  expect_bad(std::string(kHead) + "  - {tokens: 1, hidden: 1099511627776, inter: 1099511627776, experts: 1024}\n", 4,
             "inter", "int64");
  expect_bad(std::string(kHead) + "  - {tokens: 1, hidden: 1048576, inter: 1048576, experts: 64}\n", 4, "inter",
             "of host memory");
}

TEST(CaseValues, MalformedNodesAreBadInputNamingTheKey) {
  expect_bad(std::string(kHead) + "  - {tokens: 1, [a, b]: 3}\n", 4, "<sequence>", "scalar");
  expect_bad(std::string(kHead) + "  - {tokens: 1, quant: {? {a: 1} : 2}}\n", 4, "quant.<mapping>", "scalar");
  expect_bad("suite: t\ndefaults: {[hidden]: 64}\ncases:\n  - {tokens: 1}\n", 2, "defaults.<sequence>", "scalar");
  expect_bad(std::string(kHead) + "  - {tokens: 1, targets: {cu: {a: 1}}}\n", 4, "targets.cu", "mapping");
  expect_bad(std::string(kHead) + "  - {tokens: 1, tokens: 2}\n", 4, "tokens", "twice");
  expect_bad(std::string(kHead) + "  - {tokens: 1, variant: \"a\xff\"}\n", 4, "variant", "UTF-8");
  expect_bad(std::string(kHead) + "  - {tokens: 1, tags: [\"a\\tb\"]}\n", 4, "tags", "control character");
  expect_bad(std::string(kHead) + "  - sweep: {quant.flavour: [fn]}\n", 4, "sweep.quant.flavour", "under quant");
}

// The merge of defaults, case and sweep values: mappings merge key by key, a sweep axis sets its key. A null (`key:`
// alone, `~`) sets nothing and is refused: it would leave the default in place without a word.
TEST(CaseValues, DefaultsCaseAndSweepValuesMergeKeyByKey) {
  const std::string head =
      "suite: t\ndefaults: {hidden: 64, inter: 64, experts: 8, topk: 2, quant: {weight: fp8_channel, act: fp8_token}}\n"
      "cases:\n";
  const Suite s = load_suite_text(
      head + "  - {tokens: 1, quant: {qmax: 224}}\n"
             "  - {tokens: 2}\n"
             "  - sweep: {quant.flavor: [fn, fnuz], tokens: [3]}\n    case: {quant: {qmax: 200}}\n",
      "s.yaml");
  ASSERT_EQ(s.cases.size(), 4u);
  EXPECT_EQ(s.cases[0].problem.quant.weight, WeightFormat::fp8_channel);
  EXPECT_EQ(s.cases[0].problem.quant.act_qmax, 224.0f);
  EXPECT_EQ(s.cases[1].problem.quant.act, ActFormat::fp8_token);
  EXPECT_EQ(s.cases[3].problem.quant.flavor, Fp8Flavor::fnuz);
  EXPECT_EQ(s.cases[3].problem.quant.act_qmax, 200.0f);
  EXPECT_EQ(s.cases[3].problem.quant.weight, WeightFormat::fp8_channel);
  EXPECT_EQ(s.cases[3].source, "s.yaml:6");
  expect_bad(head + "  - {tokens: 2, quant: ~}\n", 4, "quant", "has no value");
}

TEST(CaseValues, Utf8ValidationFollowsTheEncodingRules) {
  EXPECT_TRUE(valid_utf8("plain"));
  EXPECT_TRUE(valid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e"));  // é € 𝄞
  EXPECT_FALSE(valid_utf8("\xc0\x80"));                  // overlong NUL
  EXPECT_FALSE(valid_utf8("\xed\xa0\x80"));              // a UTF-16 surrogate
  EXPECT_FALSE(valid_utf8("\xf4\x90\x80\x80"));          // past U+10FFFF
  EXPECT_FALSE(valid_utf8("\xe2\x82"));                  // cut short
  EXPECT_FALSE(valid_utf8("\x80"));                      // a continuation byte first
  EXPECT_EQ(printable("a\xff\n"), "a\\xFF\\x0A");
}

TEST(CaseValues, SuiteLimits) {
  std::string axis;  // 32 values: four such axes expand to 32^4 = 1,048,576 cases, past the million
  for (int i = 1; i <= 32; ++i) axis += (i > 1 ? ", " : "") + std::to_string(i);
  expect_bad(std::string(kHead) + "  - sweep: {tokens: [" + axis + "], seed: [" + axis + "], split_k: [" + axis +
                 "], 'input.mean': [" + axis + "]}\n",
             4, "sweep", "1000000 cases per suite");
  expect_bad("suite: t\ncases: " + std::string(3000, '[') + std::string(3000, ']') + "\n", 2, "", "2000 levels");
  try {
    load_suite_text(std::string(kHead) + std::string(kSuiteFileLimit.bytes, '#') + "\n", "s.yaml");
    ADD_FAILURE() << "a file past 64 MiB loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("64 MiB"), std::string::npos) << e.what();
  }
}

}  // namespace moe

namespace moe {
// Every model preset, sharded so that it fits any machine, is a problem validate() accepts (its numeric fields within
// the schema's ranges) and that loads from a case file.
TEST(CaseValues, EveryModelPresetLoads) {
  std::string names = model_preset_names(), yaml = "suite: t\ncases:\n";
  for (std::size_t from = 0; from < names.size();) {
    const std::size_t comma = std::min(names.find(", ", from), names.size());
    const std::string m = names.substr(from, comma - from);
    // TP 8 (GPT-OSS: 2, its 2880 / TP must stay a multiple of 32 for MXFP4) and EP 8 keep each shard small.
    yaml += "  - {model: " + m + ", tp: " + (m.rfind("gpt-oss", 0) == 0 ? "2" : "8") + ", ep: 8, tokens: 2}\n";
    from = comma + 2;
  }
  const Suite s = load_suite_text(yaml, "s.yaml");
  EXPECT_EQ(s.cases.size(), 11u);
  for (const CaseSpec& c : s.cases) EXPECT_FALSE(validate(c.problem)) << c.id;
}
}  // namespace moe
