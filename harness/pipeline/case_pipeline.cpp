#include "harness/pipeline/case_pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <fmt/format.h>

#include "fixtures/checkpoint.hpp"
#include "fixtures/content_seal.hpp"
#include "fixtures/error.hpp"
#include "fixtures/exact_tier.hpp"
#include "verdict/judge.hpp"
#include "reference/moe/band_explain.hpp"
#include "harness/pipeline/slot_steps.hpp"
#include "harness/pipeline/envelope_sim.hpp"
#include "harness/pipeline/probes.hpp"
#include "harness/pipeline/device_probes.hpp"
#include "harness/pipeline/token_probes.hpp"
#include "verdict/systematic.hpp"
#include "harness/tuning/dispatch_lookup.hpp"
#include "harness/case/case_thresholds.hpp"
#include "fixtures/tensor_element.hpp"

namespace moe {

namespace {
using Clock = std::chrono::steady_clock;
// Seconds since `t`, and `t` moved to now: consecutive phases are timed back to back.
double lap(Clock::time_point& t) {
  const Clock::time_point now = Clock::now();
  const double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}

}  // namespace

void fill_dirty(Tensor& out, const std::vector<std::byte>& previous) {
  std::byte* b = out.bytes();
  for (std::size_t i = 0, n = out.nbytes(); i < n && !previous.empty(); i += previous.size())
    std::memcpy(b + i, previous.data(), std::min(previous.size(), n - i));
}

namespace {
// The probes of a case in words, for the diagnostics: "  probes: rerun ran; linearity_all_weights not run: why".
std::string probes_line(const std::vector<std::pair<std::string, std::string>>& probes) {
  std::string s;
  for (const auto& [name, st] : probes) s += (s.empty() ? "  probes: " : "; ") + name + " " + st;
  return s.empty() ? s : s + "\n";
}
// The envelope in words: what was simulated and what it set; where none was, why (a passing verdict did not need
// one; a failing one had references that came without one).
std::string envelope_line(const Envelope& e, const EnvelopeLimits& lim, const Thresholds& th, bool pass) {
  if (!lim.applied)
    return !e.empty() || th.bitwise ? ""
           : pass ? "  envelope: not simulated: the output passes at the case's own thresholds, which an envelope only "
                    "widens\n"
                  : "  envelope: none simulated: the fixed thresholds apply\n";
  std::string z;
  for (const auto& [name, scale] : lim.z_scale) z += fmt::format("{}{} x{:.2f}", z.empty() ? "" : ", ", name, scale);
  std::string fl;
  for (const auto& [name, floor] : lim.z_floor) fl += fmt::format("{}{} {:.2e}", fl.empty() ? "" : ", ", name, floor);
  return fmt::format("  envelope: {}; members' worst cos {:.6f}, rel {:.3e}, mismatch {:.3e}, band tokens {} -> "
                     "min_cos {:.6f}, max_rel {:.3e}, mismatch limit {:.3e}{}{}{}\n",
                     e.model, lim.members_worst_cos, lim.members_worst_rel, lim.members_max_mismatch,
                     lim.band_members_max, th.min_cos, th.max_rel, th.max_mismatch_fraction,
                     th.band_allowance >= 0 ? fmt::format(", band allowance {}", th.band_allowance) : "",
                     z.empty() ? "" : "; z scale " + z, fl.empty() ? "" : "; standard-error floor " + fl);
}
}  // namespace

ProblemSpec case_problem(const CaseSpec& c, std::optional<std::uint64_t> seed) {
  ProblemSpec p = c.problem;
  if (seed) p.seed = *seed;
  return p;
}

Checkpoint pristine_checkpoint(const CaseSpec& c, const ProblemSpec& p, WeightCache* weights, KnownSeals* known) {
  if (known) known->clear();
  return c.tier == Tier::exact ? generate_exact_checkpoint(p) : weights ? weights->checkpoint_for(p, known) : generate_checkpoint(p);
}

Judgement judge_output(const ProblemSpec& p, const ReferenceSet& refs, const Tensor& out, const Thresholds& case_th,
                       const Checkpoint* weights, BandMemo* memo) {
  const Thresholds th = with_envelope(case_th, refs.envelope);
  BandExplainer explain;
  if (weights)
    explain = [&](std::int64_t tok, const std::vector<double>& e) {
      if (memo)
        if (auto it = memo->find(tok); it != memo->end()) return it->second;
      BandExplanation r = explain_band_token(p, *weights, refs.routing, tok, refs.contract.data() + tok * p.hidden, e);
      if (memo) memo->emplace(tok, r);
      return r;
    };
  return judge({refs.contract.begin(), refs.contract.end()}, {refs.ideal.begin(), refs.ideal.end()}, out, p.tokens,
               p.hidden, th, refs.routing, explain);
}

void record_verdict(CaseRecord& rec, const ProblemSpec& p, const ReferenceSet& refs, const Tensor& out,
                    const Judgement& j, const Thresholds& case_th, const Checkpoint* weights) {
  EnvelopeLimits env;
  const Thresholds th = with_envelope(case_th, refs.envelope, &env);
  rec.status = j.pass ? Status::pass : Status::fail;
  rec.failed_check = j.failed_check;
  rec.reason = j.pass ? "" : to_string(j.failed_check) + ": " + j.summary;
  // After the per-token checks: the systematic statistics (statistical tier; bit equality decides the exact one).
  rec.systematic = th.systematic.on
                       ? systematic_checks({{refs.contract.data(), refs.contract.size()}, out, p.tokens, p.hidden,
                                            refs.routing, p.first_local_expert(), p.local_experts(),
                                            {refs.slots.data(), refs.slots.size()}, case_slot_steps(p, weights, refs.routing)},
                                           th.systematic)
                       : systematic_not_run("exact tier: bit equality decides", th.systematic);
  if (const StatisticRecord* s = first_failure(rec.systematic); s && j.pass) {
    rec.status = Status::fail;
    // Every statistic is named by a Check (reports/verdict.hpp); a name without one is not a verdict: an error.
    const std::optional<Check> check = parse_check(s->name);
    rec.failed_check = check ? *check : Check::harness_error;
    if (!check) rec.status = Status::error;
    rec.reason = systematic_reason(*s);
  }
  rec.contract = refs.rounding;
  const ContractRecord& rc = refs.rounding;
  const bool plain = rc.effective == "default" && rc.source != "pinned" && rc.not_applied.empty();
  rec.details = j.details() + systematic_lines(rec.systematic) +
                envelope_line(refs.envelope, env, th, rec.status == Status::pass) +
                (rc.effective.empty() || plain ? "" : contract_line(rc));
  // Non-finite metrics (an output with unwritten or non-finite elements) are written as null in report.json.
  rec.metrics = {{"min_cos", j.min_cos}, {"max_rel", j.max_rel}, {"max_abs", j.max_abs},
                 {"mismatch_fraction", j.mismatch_fraction}, {"non_finite", double(j.non_finite)},
                 {"unwritten", double(j.unwritten)}, {"bit_mismatches", double(j.bit_mismatches)},
                 {"ref_norm", j.ref_norm}, {"out_norm", j.out_norm}, {"ideal_min_cos", j.ideal_min_cos},
                 {"ideal_max_rel", j.ideal_max_rel}, {"threshold_min_cos", th.min_cos}, {"threshold_max_rel", th.max_rel},
                 {"band_tokens", double(j.band_tokens)}, {"band_allowance", double(j.band_allowance)},
                 {"band_max_ratio", j.band_max_ratio}, {"strict_min_cos", j.strict_min_cos},
                 {"band_explained", double(j.band_explained)},
                 {"band_rejected", double(j.band_rejected)}, {"band_undecisive", double(j.band_undecisive)},
                 {"band_explain_ratio", j.band_explain_ratio},
                 {"strict_max_rel", j.strict_max_rel}, {"threshold_mismatch_fraction", th.max_mismatch_fraction},
                 {"strict_mismatch_fraction", j.strict_mismatch_fraction},
                 {"mismatch_band_tokens", double(j.mismatch_band_tokens)},
                 {"envelope_members", double(refs.envelope.members.size())},
                 {"envelope_tokens", double(refs.envelope.sampled.size())},
                 {"envelope_band_max", double(env.band_members_max)},
                 {"envelope_worst_cos", env.members_worst_cos}, {"envelope_worst_rel", env.members_worst_rel},
                 {"envelope_max_mismatch", env.members_max_mismatch}};
  for (const auto& [name, scale] : env.z_scale) rec.metrics["envelope_z_scale_" + name] = scale;
  for (const auto& [name, floor] : env.z_floor) rec.metrics["envelope_se_floor_" + name] = floor;
  // Whether the band's explanation test ran, only where a token was inside the band's edge (elsewhere it has nothing
  // to say, and a verdict on an exported reference, which has no weights, keeps the same metrics as one recomputed).
  if (j.band_tokens + j.mismatch_band_tokens + j.band_rejected > 0)
    rec.metrics["band_explain_run"] = double(j.band_explain_run);
  rec.token_cos = j.token_cos;
  rec.token_rel = j.token_rel;
}

bool needs_envelope(const ProblemSpec& p, const ReferenceSet& refs, const Tensor& out, const Thresholds& th,
                    const Checkpoint* weights, BandMemo* memo, std::optional<CaseRecord>* judged) {
  if (!refs.envelope.empty() || th.bitwise) return false;
  CaseRecord at_case;
  record_verdict(at_case, p, refs, out, judge_output(p, refs, out, th, weights, memo), th, weights);
  const bool fails = at_case.status != Status::pass;
  if (judged) *judged = std::move(at_case);
  return fails;
}

bool start_record(CaseRecord& rec, const CaseSpec& spec, const KernelUnderTest& kernel, const DeviceDetection& device,
                  const DeviceRequirement& required) {
  rec.id = spec.id;
  rec.kernel = kernel.id();
  rec.source = spec.source;
  const GateDecision g = gate(spec, kernel, device, required);
  if (g.action == GateDecision::Action::run) return true;
  rec.status = g.action == GateDecision::Action::skip ? Status::skip : Status::fail;
  rec.failed_check = g.action == GateDecision::Action::skip ? Check::none : Check::gating;
  rec.reason = g.reason;
  return false;
}

void verdict_and_probes(CaseRecord& rec, const CaseSpec& spec, const ProblemSpec& p, KernelUnderTest& kernel,
                        Checkpoint& working, const ReferenceSet& refs, const Tensor& out, const RunInfo& info,
                        const PipelineOptions& opt, const Checkpoint* pristine, BandMemo* memo,
                        CaseRecord* judged) {
  CaseTiming& tm = rec.timing;
  Clock::time_point t = Clock::now();
  const RoutingResult& routing = refs.routing;
  // The verdict's metrics, details and tokens join the record only once the probes ran: a probe that throws
  // leaves an error record without them.
  CaseRecord verdict;
  if (judged) {
    verdict = std::move(*judged);
  } else {
    const Thresholds th = case_thresholds(spec);
    record_verdict(verdict, p, refs, out, judge_output(p, refs, out, th, pristine, memo), th, pristine);
  }
  rec.status = verdict.status;
  rec.failed_check = verdict.failed_check;
  rec.reason = verdict.reason;
  rec.systematic = std::move(verdict.systematic);
  rec.contract = verdict.contract;
  tm.judge += lap(t);
  rec.probes = kernel.input_checks();
  const ProbeOutcome probes =
      run_probes(p, kernel, working, routing, out, rec.failed_check, {opt.rerun_probe, opt.linearity_probe});
  rec.probes.insert(rec.probes.end(), probes.status.begin(), probes.status.end());
  if (probes.failed_check != Check::none) {
    rec.status = Status::fail;
    rec.failed_check = probes.failed_check;
    rec.reason = probes.reason;
  }
  const ProbeOutcome token = run_token_probes(p, kernel, working, routing, out, rec.failed_check, opt.token_probes);
  rec.probes.insert(rec.probes.end(), token.status.begin(), token.status.end());
  if (token.failed_check != Check::none) {
    rec.status = Status::fail;
    rec.failed_check = token.failed_check;
    rec.reason = token.reason;
  }
  const ProbeOutcome device = run_device_probes(p, kernel, working, routing, out, rec.failed_check, opt.token_probes);
  tm.probes = lap(t);
  rec.probes.insert(rec.probes.end(), device.status.begin(), device.status.end());
  if (device.failed_check != Check::none) {
    rec.status = Status::fail;
    rec.failed_check = device.failed_check;
    rec.reason = device.reason;
  }
  rec.details = verdict.details + probes_line(rec.probes);
  rec.metrics = std::move(verdict.metrics);
  rec.token_cos = std::move(verdict.token_cos);
  rec.token_rel = std::move(verdict.token_rel);
  rec.metrics.insert({{"kernel_us", info.median_us}, {"achieved_tbps", info.achieved_tbps},
                      {"achieved_tflops", info.achieved_tflops}});
  rec.metrics.insert(probes.metrics.begin(), probes.metrics.end());  // only the probes that ran
  rec.metrics.insert(token.metrics.begin(), token.metrics.end());
  rec.metrics.insert(device.metrics.begin(), device.metrics.end());
  tm.judge += lap(t);  // the record's metrics and diagnostics belong to the verdict
}

void record_exception(CaseRecord& rec) {
  try {
    throw;
  } catch (const CaseInputError& e) {
    rec.status = Status::error;
    rec.failed_check = Check::bad_input;
    rec.reason = e.what();
  } catch (const Error& e) {
    // A verdict raised as an error (ExitCode::case_failed, the check in its key): out of device memory. A key that
    // names no check is not a verdict this harness knows: an error, never a pass.
    const std::optional<Check> check = e.code() == ExitCode::case_failed ? parse_check(e.key()) : std::nullopt;
    const bool verdict = check && *check != Check::none;
    rec.status = verdict ? Status::fail : Status::error;
    rec.failed_check = verdict ? *check : Check::harness_error;
    rec.reason = verdict ? e.key() + ": " + e.problem() + " (" + e.where() + ")" : e.what();
  } catch (const std::bad_alloc&) {
    rec.status = Status::error;
    rec.failed_check = Check::out_of_memory;
    rec.reason = "out_of_memory: a host memory allocation failed (std::bad_alloc) while the case ran";
  } catch (const std::exception& e) {
    rec.status = Status::error;
    rec.failed_check = Check::harness_error;
    rec.reason = std::string("unexpected exception: ") + e.what();
  } catch (...) {
    rec.status = Status::error;
    rec.failed_check = Check::harness_error;
    rec.reason = "unexpected exception of a type that is not std::exception (thrown by the kernel under test?)";
  }
}

CaseRecord execute_case(const CaseSpec& spec, KernelUnderTest& kernel, const DeviceDetection& device,
                        const PipelineOptions& opt) {
  CaseRecord rec;
  if (!start_record(rec, spec, kernel, device, opt.device_requirement)) return rec;
  const ProblemSpec given = case_problem(spec, opt.seed);
  try {
    CaseTiming& tm = rec.timing;
    Clock::time_point t = Clock::now();
    // The contract the case is judged against for this kernel; the kernel runs that contract's problem. A floor
    // that zeroes every input is refused before the fixture is generated.
    const ResolvedContract contract = resolve_contract(
        spec, given, opt.declared_contract ? *opt.declared_contract : kernel.rounding_contract(given));
    refuse_zeroing_floor(contract, spec.source.empty() ? "case " + spec.id : spec.source, "kernel " + kernel.id(),
                         "rounding_contract");
    KnownSeals known;  // the lent weights' seals, proven by the case that gave them back
    Checkpoint pristine = pristine_checkpoint(spec, given, opt.weights, &known);
    tm.generate = lap(t);
    // The record's fingerprint (hash_bytes, comparable with every earlier report) and the chunk digests the
    // after-kernel check compares against, in one parallel pass (fixtures/content_seal.hpp).
    const CheckpointSeal seal = seal_checkpoint(pristine, known);
    const std::uint64_t fingerprint = seal.fingerprint;
    rec.fixture_fingerprint = fingerprint;
    tm.fingerprint = lap(t);
    const ProblemSpec& p = contract.problem;
    ReferenceSet refs = [&] {
      try {
        return opt.references ? opt.references->get(spec, contract, pristine, fingerprint, false)
                              : compute_references(contract, pristine, false);
      } catch (const CaseInputError& e) {  // the references know no file: the case's own key is named at its line
        if (e.where() != "case" || spec.source.empty()) throw;
        throw CaseInputError(spec.source, e.key(), e.problem(), e.fix());
      }
    }();
    const RoutingResult& routing = refs.routing;
    tm.reference = lap(t);
    rec.reference_s = tm.generate + tm.fingerprint + tm.reference;

    Checkpoint working = pristine.clone();
    const EndCase end_case(kernel);  // before `working` goes: the kernel's device copies of it are freed
    const std::string table_note = opt.dispatch_table ? apply_dispatch_table(*opt.dispatch_table, spec, kernel, device) : "";
    kernel.prepare(p, working);
    tm.clone_prepare = lap(t);
    Tensor out("out", p.output_dtype, {p.tokens, p.hidden});
    if (opt.dirty_output && !opt.dirty_output->empty()) fill_dirty(out, *opt.dirty_output);
    else fill_sentinel(out, 0);
    const RunInfo info = kernel.run(p, working, routing, out);
    if (opt.dirty_output) opt.dirty_output->assign(out.bytes(), out.bytes() + out.nbytes());
    tm.kernel = lap(t) - info.upload_s;
    tm.upload = info.upload_s;
    rec.variant = info.variant + table_note;
    rec.kernel_us = info.median_us;
    if (opt.after_kernel_hook) opt.after_kernel_hook(pristine);
    const std::string mutated = changed_since(pristine, seal);
    tm.fingerprint += lap(t);
    if (!mutated.empty())
      throw_harness_error(spec.id, "reference inputs were mutated: the pristine checkpoint's " + mutated +
                                       " changed while the kernel ran (a converter wrote into tensors it was never given?)",
                          "kernels must only touch the working clone handed to prepare()");
    // The envelope, where the verdict needs it (the band's explanation lent the pristine weights, each token's result
    // kept for the verdict's judgement); stored with the references so that the next output of this case that needs
    // it finds it.
    // The decision is a judgement (the judge phase); a simulation belongs to the references.
    BandMemo memo;
    const Thresholds case_th = case_thresholds(spec);
    std::optional<CaseRecord> judged;  // the verdict at the case's thresholds, where the decision computed it
    const bool widen = opt.envelope_always ? refs.envelope.empty() && !case_th.bitwise
                                           : needs_envelope(p, refs, out, case_th, &pristine, &memo, &judged);
    tm.judge += lap(t);
    if (widen) {
      refs.envelope = simulate_envelope(p, pristine, refs.routing, refs.contract, refs.ideal, refs.slots);
      if (opt.references) opt.references->store_envelope(spec, contract, fingerprint, refs);
      tm.reference += lap(t);
      rec.reference_s = tm.generate + tm.fingerprint + tm.reference;
    }

    if (opt.capture) {
      std::vector<float> o(static_cast<std::size_t>(out.numel()));
      for (std::int64_t i = 0; i < out.numel(); ++i) o[i] = element_as_f32(out, i);
      opt.capture({refs.contract.begin(), refs.contract.end()}, o);
    }
    // The pristine checkpoint (shown unchanged above) lends the band's explanation test its weights, then goes back.
    // Without a new envelope the decision's verdict is the verdict (same references, thresholds and output).
    verdict_and_probes(rec, spec, p, kernel, working, refs, out, info, opt, &pristine, &memo,
                       judged && !widen ? &*judged : nullptr);
    if (spec.tier != Tier::exact && opt.weights) opt.weights->give_back(given, std::move(pristine), &seal);
  } catch (...) {
    record_exception(rec);
  }
  return rec;
}

}  // namespace moe
