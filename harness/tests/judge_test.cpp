#include "harness/judge.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "fixtures/error.hpp"
#include "reference/formats/tensor_element.hpp"

namespace moe {
namespace {
constexpr std::int64_t kT = 64, kH = 128;
std::vector<float> reference() {
  std::vector<float> r(kT * kH);
  for (std::int64_t i = 0; i < kT * kH; ++i) r[i] = std::sin(0.37f * float(i)) + 0.1f;
  return r;
}
Tensor as_output(const std::vector<float>& v) {
  Tensor t("out", DType::f32, {kT, kH});
  std::copy(v.begin(), v.end(), t.span<float>().begin());
  return t;
}
RoutingResult routing() {
  RoutingResult r{kT, 2, std::vector<std::int32_t>(kT * 2, 3), std::vector<float>(kT * 2, 0.5f)};
  return r;
}
Thresholds th() {
  Thresholds t;
  t.min_cos = 0.9999; t.max_rel = 0.01; t.atol = 1e-3; t.rtol = 1e-2; t.max_mismatch_fraction = 0.001;
  return t;
}
}  // namespace

TEST(Judge, CorrectOutputPasses) {
  const auto r = reference();
  const Judgement j = judge(r, {}, as_output(r), kT, kH, th(), routing());
  EXPECT_TRUE(j.pass) << j.summary;
  EXPECT_DOUBLE_EQ(j.min_cos, 1.0);
}

// RTP-LLM's mean cosine over tokens hides one bad token: 63 perfect tokens and one at cos ~0.87 average to 0.998.
TEST(Judge, OneBadTokenAmongManyFailsOnMinCosAndIsNamed) {
  const auto r = reference();
  auto o = r;
  for (std::int64_t c = 0; c < kH; c += 4) o[17 * kH + c] = 0.0f;  // a quarter of one token lost: cos ~0.87
  const Judgement j = judge(r, {}, as_output(o), kT, kH, th(), routing());
  double mean = 0;
  for (double c : j.token_cos) mean += c / kT;
  EXPECT_GT(mean, 0.99);  // what a mean-cosine gate would have accepted
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, "min_cos");
  EXPECT_EQ(j.min_cos_token, 17);
  EXPECT_EQ(j.worst_tokens.front().token, 17);
  EXPECT_EQ(j.worst_tokens.front().experts, (std::vector<std::int32_t>{3, 3}));
}

// Cosine is blind to magnitude: an output scaled by 1.05 keeps cos = 1 but breaks rel.
TEST(Judge, MagnitudeErrorFailsRelDespitePerfectCosine) {
  const auto r = reference();
  auto o = r;
  for (auto& v : o) v *= 1.05f;
  const Judgement j = judge(r, {}, as_output(o), kT, kH, th(), routing());
  EXPECT_NEAR(j.min_cos, 1.0, 1e-9);
  EXPECT_EQ(j.failed_check, "max_rel");
}

// The element band is relative to the REFERENCE: a band relative to the kernel's output would grow with a blown-up
// output (vLLM check_accuracy) and accept it.
TEST(Judge, ElementBandIsRelativeToTheReference) {
  const auto r = reference();
  auto o = r;
  o[5] = r[5] * 1.5f;  // one element 50% off: 1/8192 of elements, above the 1e-3 allowed? no: check the band itself
  Thresholds t = th();
  t.max_mismatch_fraction = 0.0;
  t.max_rel = 10; t.min_cos = 0;
  const Judgement j = judge(r, {}, as_output(o), kT, kH, t, routing());
  EXPECT_EQ(j.mismatches, 1);
  EXPECT_EQ(j.failed_check, "mismatch_fraction");
  ASSERT_FALSE(j.worst_elements.empty());
  EXPECT_EQ(j.worst_elements[0].token, 0);
  EXPECT_EQ(j.worst_elements[0].column, 5);
}

TEST(Judge, UnwrittenElementsAreCountedFromTheSentinel) {
  const auto r = reference();
  Tensor out = as_output(r);
  Tensor sent("s", DType::f32, {1});
  fill_sentinel(sent);
  for (std::int64_t c = 0; c < kH; ++c) out.span<float>()[(kT - 1) * kH + c] = sent.span<float>()[0];  // last token never written
  const Judgement j = judge(r, {}, out, kT, kH, th(), routing());
  EXPECT_EQ(j.unwritten, kH);
  EXPECT_EQ(j.failed_check, "unwritten");
}

TEST(Judge, NonFiniteOutputFails_NonFiniteReferenceIsAHarnessError) {
  auto r = reference();
  auto o = r;
  o[100] = INFINITY;
  EXPECT_EQ(judge(r, {}, as_output(o), kT, kH, th(), routing()).failed_check, "non_finite");
  r[3] = NAN;
  try {
    judge(r, {}, as_output(o), kT, kH, th(), routing());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::harness_error);
  }
}

TEST(Judge, AllZeroReferenceIsAHarnessError) {
  const std::vector<float> zeros(kT * kH, 0.0f);
  try {
    judge(zeros, {}, as_output(zeros), kT, kH, th(), routing());
    FAIL() << "a degenerate fixture must not pass";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::harness_error);
  }
}

TEST(Judge, AllZeroOutputFails) {
  const auto r = reference();
  const Judgement j = judge(r, {}, as_output(std::vector<float>(kT * kH, 0.0f)), kT, kH, th(), routing());
  EXPECT_FALSE(j.pass);
  EXPECT_EQ(j.failed_check, "zero_output");
}

TEST(Judge, Bf16OutputsAreDecodedAndSentinelsAreBf16NaNs) {
  Tensor t("o", DType::bf16, {1, 2});
  fill_sentinel(t, 0);
  EXPECT_TRUE(std::isnan(element_as_f32(t, 0)));
  EXPECT_EQ(t.span<std::uint16_t>()[1], 0x7FA5);
  fill_sentinel(t, 1);
  EXPECT_EQ(t.span<std::uint16_t>()[1], 0xFFA5);
}

}  // namespace moe
