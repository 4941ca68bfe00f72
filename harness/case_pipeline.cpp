#include "harness/case_pipeline.hpp"

#include <chrono>
#include <new>
#include <fmt/format.h>

#include "fixtures/checkpoint.hpp"
#include "fixtures/error.hpp"
#include "fixtures/exact_tier.hpp"
#include "harness/judge.hpp"
#include "harness/probes.hpp"
#include "harness/systematic.hpp"
#include "harness/thresholds.hpp"
#include "fixtures/tensor_element.hpp"

namespace moe {

namespace {
// The probes of a case in words, for the diagnostics: "  probes: rerun ran; linearity_all_weights not run: why".
using Clock = std::chrono::steady_clock;
// Seconds since `t`, and `t` moved to now: consecutive phases are timed back to back.
double lap(Clock::time_point& t) {
  const Clock::time_point now = Clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

std::string probes_line(const std::vector<std::pair<std::string, std::string>>& probes) {
  std::string s;
  for (const auto& [name, st] : probes) s += (s.empty() ? "  probes: " : "; ") + name + " " + st;
  return s.empty() ? s : s + "\n";
}
}  // namespace

CaseRecord execute_case(const CaseSpec& spec, KernelUnderTest& kernel, const DeviceDetection& device,
                        const PipelineOptions& opt) {
  CaseRecord rec;
  rec.id = spec.id;
  rec.kernel = kernel.id();
  rec.source = spec.source;
  const GateDecision g = gate(spec, kernel, device, opt.device_requirement);
  if (g.action != GateDecision::Action::run) {
    rec.status = g.action == GateDecision::Action::skip ? "skip" : "fail";
    rec.failed_check = g.action == GateDecision::Action::skip ? "" : "gating";
    rec.reason = g.reason;
    return rec;
  }
  ProblemSpec p = spec.problem;
  if (opt.seed) p.seed = *opt.seed;
  try {
    CaseTiming& tm = rec.timing;
    Clock::time_point t = Clock::now();
    Checkpoint pristine = spec.tier == Tier::exact ? generate_exact_checkpoint(p)
                          : opt.weights              ? opt.weights->checkpoint_for(p)
                                                     : generate_checkpoint(p);
    tm.generate = lap(t);
    const std::uint64_t fingerprint = pristine.fingerprint();
    rec.fixture_fingerprint = fingerprint;
    tm.fingerprint = lap(t);
    const ReferenceSet refs = opt.references ? opt.references->get(spec, p, pristine, fingerprint)
                                             : compute_references(p, pristine);
    const RoutingResult& routing = refs.routing;
    const Values& contract = refs.contract;
    const Values& ideal = refs.ideal;
    tm.reference = lap(t);
    rec.reference_s = tm.generate + tm.fingerprint + tm.reference;

    Checkpoint working = pristine.clone();
    kernel.prepare(p, working);
    tm.clone_prepare = lap(t);
    Tensor out("out", p.output_dtype, {p.tokens, p.hidden});
    fill_sentinel(out, 0);
    const RunInfo info = kernel.run(p, working, routing, out);
    tm.kernel = lap(t) - info.upload_s;
    tm.upload = info.upload_s;
    rec.variant = info.variant;
    rec.kernel_us = info.median_us;
    if (opt.after_kernel_hook) opt.after_kernel_hook(pristine);
    const bool mutated = pristine.fingerprint() != fingerprint;
    tm.fingerprint += lap(t);
    if (mutated)
      throw_harness_error(spec.id, "reference inputs were mutated: the pristine checkpoint's fingerprint changed "
                                   "while the kernel ran (a converter wrote into tensors it was never given?)",
                          "kernels must only touch the working clone handed to prepare()");
    if (spec.tier != Tier::exact && opt.weights) opt.weights->give_back(p, std::move(pristine));  // shown unchanged

    if (opt.capture) {
      std::vector<float> o(static_cast<std::size_t>(out.numel()));
      for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = element_as_f32(out, i);
      opt.capture({contract.begin(), contract.end()}, o);
    }
    const Thresholds th = case_thresholds(spec);
    const Judgement j = judge({contract.begin(), contract.end()}, {ideal.begin(), ideal.end()}, out, p.tokens,
                              p.hidden, th, routing);
    rec.status = j.pass ? "pass" : "fail";
    rec.failed_check = j.failed_check;
    rec.reason = j.pass ? "" : j.failed_check + ": " + j.summary;
    // After the per-token checks: the systematic statistics (statistical tier; bit equality decides the exact one).
    rec.systematic = th.systematic.on
                         ? systematic_checks({{contract.data(), contract.size()}, out, p.tokens, p.hidden, routing,
                                              p.first_local_expert(), p.local_experts()}, th.systematic)
                         : systematic_not_run("exact tier: bit equality decides", th.systematic);
    if (const StatisticRecord* s = first_failure(rec.systematic); s && j.pass) {
      rec.status = "fail";
      rec.failed_check = s->name;
      rec.reason = systematic_reason(*s);
    }
    tm.judge = lap(t);
    rec.probes = kernel.input_checks();
    const ProbeOutcome probes =
        run_probes(p, kernel, working, routing, out, rec.failed_check, {opt.rerun_probe, opt.linearity_probe});
    tm.probes = lap(t);
    rec.probes.insert(rec.probes.end(), probes.status.begin(), probes.status.end());
    if (!probes.failed_check.empty()) {
      rec.status = "fail";
      rec.failed_check = probes.failed_check;
      rec.reason = probes.reason;
    }
    rec.details = j.details() + systematic_lines(rec.systematic) + probes_line(rec.probes);
    // Non-finite metrics (an output with unwritten or non-finite elements) are written as null in report.json.
    rec.metrics = {{"min_cos", j.min_cos}, {"max_rel", j.max_rel}, {"max_abs", j.max_abs},
                   {"mismatch_fraction", j.mismatch_fraction}, {"non_finite", double(j.non_finite)},
                   {"unwritten", double(j.unwritten)}, {"bit_mismatches", double(j.bit_mismatches)},
                   {"ref_norm", j.ref_norm}, {"out_norm", j.out_norm}, {"ideal_min_cos", j.ideal_min_cos},
                   {"ideal_max_rel", j.ideal_max_rel}, {"threshold_min_cos", th.min_cos}, {"threshold_max_rel", th.max_rel},
                   {"kernel_us", info.median_us}, {"achieved_tbps", info.achieved_tbps}, {"achieved_tflops", info.achieved_tflops}};
    rec.metrics.insert(probes.metrics.begin(), probes.metrics.end());  // only the probes that ran
    rec.token_cos = j.token_cos;
    rec.token_rel = j.token_rel;
    tm.judge += lap(t);  // the record's metrics and diagnostics belong to the verdict
  } catch (const Error& e) {
    // A verdict raised as an error (ExitCode::case_failed, the check in its key): out of device memory.
    const bool verdict = e.code() == ExitCode::case_failed;
    rec.status = verdict ? "fail" : "error";
    rec.failed_check = verdict ? e.key() : "harness_error";
    rec.reason = verdict ? e.key() + ": " + e.problem() + " (" + e.where() + ")" : e.what();
  } catch (const std::bad_alloc&) {
    rec.status = "error";
    rec.failed_check = "out_of_memory";
    rec.reason = "out_of_memory: a host memory allocation failed (std::bad_alloc) while the case ran";
  } catch (const std::exception& e) {
    rec.status = "error";
    rec.failed_check = "harness_error";
    rec.reason = std::string("unexpected exception: ") + e.what();
  } catch (...) {
    rec.status = "error";
    rec.failed_check = "harness_error";
    rec.reason = "unexpected exception of a type that is not std::exception (thrown by the kernel under test?)";
  }
  return rec;
}

}  // namespace moe
