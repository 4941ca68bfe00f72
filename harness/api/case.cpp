// moe_harness/case.hpp over harness/run/gating, harness/pipeline/case_pipeline, harness/pipeline/reference_cache and verdict/judge.
#include "moe_harness/case.hpp"

#include <cstring>
#include <optional>

#include "harness/case/case_thresholds.hpp"
#include "harness/pipeline/envelope_sim.hpp"
#include "harness/run/kernel_registry.hpp"
#include "kernels/external/external_output_kernel.hpp"

namespace moe::api {

DeviceDetection detect_device() { return moe::detect_device(); }

std::unique_ptr<KernelUnderTest> make_kernel(const std::string& id, double host_budget) {
  return make_kernel_by_id(id, host_budget);
}

std::vector<std::unique_ptr<KernelUnderTest>> make_kernels(const std::vector<std::string>& ids, double host_budget) {
  return moe::make_kernels(ids, host_budget);
}

GateDecision gate(const CaseSpec& c, const KernelUnderTest& kernel, const DeviceDetection& device,
                  const DeviceRequirement& required) {
  return moe::gate(c, kernel, device, required);
}

Fixture make_fixture(const CaseSpec& c, std::optional<std::uint64_t> seed, WeightCache* weights) {
  Fixture f;
  f.problem = case_problem(c, seed);
  f.pristine = pristine_checkpoint(c, f.problem, weights);
  f.fingerprint = f.pristine.fingerprint();
  return f;
}

ReferenceSet compute_references(const CaseSpec& c, const Fixture& f, ReferenceCache* cache,
                                const RoundingContract& declared) {
  const ResolvedContract rc = resolve_contract(c, f.problem, declared);
  // Without the envelope: judge simulates it where a verdict needs it.
  return cache ? cache->get(c, rc, f.pristine, f.fingerprint, false) : moe::compute_references(rc, f.pristine, false);
}

Tensor new_output(const ProblemSpec& p) {
  Tensor out("out", p.output_dtype, {p.tokens, p.hidden});
  fill_sentinel(out, 0);
  return out;
}

Thresholds thresholds(const CaseSpec& c) { return case_thresholds(c); }

CaseRecord judge(const CaseSpec& c, const Fixture& f, const ReferenceSet& refs, const Tensor& out,
                 const std::string& kernel_id) {
  check_output_tensor(out.shape(), out.dtype(), f.problem, "output of " + kernel_id + " for " + c.id, "out");
  const Thresholds th = case_thresholds(c);
  BandMemo memo;  // each band token's explanation computed once for both judgements
  std::optional<CaseRecord> judged;  // the verdict at the case's thresholds, where the decision computed it
  if (needs_envelope(f.problem, refs, out, th, &f.pristine, &memo, &judged)) {  // copied only where the verdict needs it
    ReferenceSet with = refs;
    with.envelope = simulate_envelope(f.problem, f.pristine, with.routing, with.contract, with.ideal, with.slots);
    judged.emplace();
    record_verdict(*judged, f.problem, with, out, judge_output(f.problem, with, out, th, &f.pristine, &memo), th, &f.pristine);
  } else if (!judged) {  // the references came with an envelope (or the exact tier): judged with it here
    judged.emplace();
    record_verdict(*judged, f.problem, refs, out, judge_output(f.problem, refs, out, th, &f.pristine, &memo), th, &f.pristine);
  }
  CaseRecord rec = std::move(*judged);
  rec.id = c.id;
  rec.kernel = kernel_id;
  rec.source = c.source;
  rec.fixture_fingerprint = f.fingerprint;
  return rec;
}

CaseRecord judge(const CaseSpec& c, const Fixture& f, const ReferenceSet& refs, const void* data, std::size_t nbytes,
                 DType dtype, const std::string& kernel_id) {
  Tensor out("out", dtype, {f.problem.tokens, f.problem.hidden});
  if (nbytes != out.nbytes())
    throw_bad_input("output of " + kernel_id + " for " + c.id, "out",
                    std::to_string(nbytes) + " bytes but [tokens, hidden] = [" + std::to_string(f.problem.tokens) +
                        ", " + std::to_string(f.problem.hidden) + "] of " + std::string(dtype_name(dtype)) + " is " +
                        std::to_string(out.nbytes()),
                    "pass the whole output buffer of this case");
  if (nbytes) std::memcpy(out.bytes(), data, nbytes);
  return judge(c, f, refs, out, kernel_id);
}

CaseRecord run_case(const CaseSpec& c, KernelUnderTest& kernel, const DeviceDetection& device,
                    const PipelineOptions& options) {
  return execute_case(c, kernel, device, options);
}

}  // namespace moe::api
