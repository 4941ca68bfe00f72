// The worked example of docs/judging.md "The band's explanation test" (not a test): one case of a suite, its
// envelope members (reference/moe/ensemble.hpp) at a declared accumulation as legitimate kernels (each member's rows
// in place of the sampled tokens' rows of the contract reference), judged with the explanation test; prints each
// judged member's band lines and a tally.
//   band_explain_example SUITE.yaml CASE_ID ACCUM_BITS SEED
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fixtures/tensor_element.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/case/case_thresholds.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "reference/moe/band_explain.hpp"
#include "reference/moe/ensemble.hpp"

int main(int argc, char** argv) {
  using namespace moe;
  if (argc != 5) {
    std::fprintf(stderr, "usage: band_explain_example SUITE.yaml CASE_ID ACCUM_BITS SEED\n");
    return 2;
  }
  const Suite s = load_suite_file(argv[1]);
  const CaseSpec* c = nullptr;
  for (const CaseSpec& x : s.cases)
    if (x.id == argv[2]) c = &x;
  if (!c) {
    std::fprintf(stderr, "no case %s in %s\n", argv[2], argv[1]);
    return 2;
  }
  ProblemSpec p = case_problem(*c, std::stoull(argv[4]));
  p.accum_bits = std::atoi(argv[3]);
  const Checkpoint pristine = pristine_checkpoint(*c, p, nullptr);
  const ReferenceSet refs = compute_references(p, pristine);
  EnsembleSpec e;
  e.seed = p.seed ^ 0x62616e64ull;  // "band": draws of their own, not the envelope's
  e.tokens = ensemble_tokens(p.tokens);
  const std::vector<Values> members = reference_ensemble(p, pristine, refs.routing, e);
  const std::int64_t h = p.hidden, n = std::int64_t(e.tokens.size());
  std::int64_t tested = 0, explained = 0, rejected = 0;
  double worst = 0;
  std::printf("case %s seed %llu accum_bits %d: %zu members on %lld of %lld tokens\n", c->id.c_str(),
              static_cast<unsigned long long>(p.seed), p.accum_bits, members.size(), static_cast<long long>(n),
              static_cast<long long>(p.tokens));
  for (std::size_t m = 0; m < members.size(); ++m) {
    Tensor out("out", p.output_dtype, {p.tokens, h});
    for (std::int64_t i = 0; i < p.tokens * h; ++i) store_element(out, i, refs.contract[i]);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t col = 0; col < h; ++col) store_element(out, e.tokens[i] * h + col, members[m][i * h + col]);
    const Judgement j = judge_output(p, refs, out, case_thresholds(*c), &pristine);
    tested += std::int64_t(j.band_explanations.size());
    explained += j.band_explained;
    rejected += j.band_rejected;
    worst = std::max(worst, j.band_explain_ratio);
    if (!j.band_explanations.empty())
      std::printf("member %zu: %s, %s\n%s", m, j.pass ? "pass" : "FAIL", j.summary.c_str(), j.band_explain_lines().c_str());
  }
  std::printf("tally: %lld band tokens tested, %lld explained, %lld rejected, worst residual ratio %.2f\n",
              static_cast<long long>(tested), static_cast<long long>(explained), static_cast<long long>(rejected), worst);
  return rejected ? 1 : 0;
}
