#include "harness/case_pipeline.hpp"

#include <chrono>
#include <cmath>
#include <map>
#include <new>
#include <fmt/format.h>

#include "fixtures/checkpoint.hpp"
#include "fixtures/error.hpp"
#include "fixtures/exact_tier.hpp"
#include "harness/judge.hpp"
#include "harness/thresholds.hpp"
#include "reference/formats/tensor_element.hpp"

namespace moe {

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
    const auto t0 = std::chrono::steady_clock::now();
    Checkpoint pristine = spec.tier == Tier::exact ? generate_exact_checkpoint(p)
                          : opt.weights              ? opt.weights->checkpoint_for(p)
                                                     : generate_checkpoint(p);
    const std::uint64_t fingerprint = pristine.fingerprint();
    rec.fixture_fingerprint = fingerprint;
    const ReferenceSet refs = opt.references ? opt.references->get(spec, p, pristine, fingerprint)
                                             : compute_references(p, pristine);
    const RoutingResult& routing = refs.routing;
    const Values& contract = refs.contract;
    const Values& ideal = refs.ideal;
    rec.reference_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    Checkpoint working = pristine.clone();
    kernel.prepare(p, working);
    Tensor out("out", p.output_dtype, {p.tokens, p.hidden});
    fill_sentinel(out, 0);
    const RunInfo info = kernel.run(p, working, routing, out);
    rec.variant = info.variant;
    rec.kernel_us = info.median_us;
    if (opt.after_kernel_hook) opt.after_kernel_hook(pristine);
    if (pristine.fingerprint() != fingerprint)
      throw_harness_error(spec.id, "reference inputs were mutated: the pristine checkpoint's fingerprint changed "
                                   "while the kernel ran (a converter wrote into tensors it was never given?)",
                          "kernels must only touch the working clone handed to prepare()");

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
    // Structural probe: run again into the second (inverse-pattern) sentinel. Every element must be written again,
    // and a kernel that declares itself deterministic must reproduce the first output bit for bit.
    std::int64_t rerun_unwritten = 0, rerun_mismatches = 0;
    if (opt.rerun_probe && kernel.rerunnable() && j.pass) {
      Tensor out2("out2", p.output_dtype, {p.tokens, p.hidden});
      fill_sentinel(out2, 1);
      kernel.run(p, working, routing, out2);
      const std::uint32_t s2 = sentinel_bits(p.output_dtype, 1);
      const bool two = dtype_size(p.output_dtype) == 2;
      for (std::int64_t i = 0; i < out.numel(); ++i) {
        const std::uint32_t a = two ? out.span<std::uint16_t>()[i] : out.span<std::uint32_t>()[i];
        const std::uint32_t b = two ? out2.span<std::uint16_t>()[i] : out2.span<std::uint32_t>()[i];
        if (b == s2) ++rerun_unwritten;
        else if (a != b) ++rerun_mismatches;
      }
      if (rerun_unwritten > 0 || (kernel.deterministic(p) && rerun_mismatches > 0)) {
        rec.status = "fail";
        rec.failed_check = "rerun";
        rec.reason = fmt::format("rerun: the second run into the inverse sentinel left {} element(s) unwritten and "
                                 "differs from the first in {} element(s) (the kernel declares itself {})",
                                 rerun_unwritten, rerun_mismatches, kernel.deterministic(p) ? "deterministic" : "non-deterministic");
      }
    }
    // Linearity probes (exact, so only on kernels that declare themselves deterministic). Router weights are
    // applied to each expert's output as a product, so scaling them by 2 is exact everywhere downstream:
    //  (1) every router weight doubled (weights on the output, no shared expert on this rank): the output must be
    //      exactly twice the first one (catches weights dropped, applied twice, applied before a bias or on the
    //      input, or mixed into anything else);
    //  (2) one expert's weights doubled (the most-used local expert): every token that does not route to it must
    //      come out bit-identical (catches one token's or expert's work leaking into another's).
    std::int64_t lin_mismatches = 0;
    std::string lin_what;
    if (opt.linearity_probe && kernel.rerunnable() && kernel.deterministic(p) && rec.status == "pass") {
      auto rerun_with = [&](const RoutingResult& r2) {
        Tensor o2("out_linearity", p.output_dtype, {p.tokens, p.hidden});
        fill_sentinel(o2, 1);
        kernel.run(p, working, r2, o2);
        return o2;
      };
      const bool shared_here = p.n_shared > 0 && p.ep_rank == 0;
      if (p.router_weight_on == RouterWeightOn::output && !shared_here) {
        RoutingResult r2 = routing;
        for (float& w : r2.weights) w *= 2.0f;
        const Tensor o2 = rerun_with(r2);
        // Doubling commutes with rounding except below the output dtype's smallest normal (its grid is uniform
        // there): such elements are not compared (f16's is 2^-14, within reach of real outputs).
        const float min_normal = p.output_dtype == DType::f16 ? 0x1p-14f : 0x1p-126f;
        for (std::int64_t i = 0; i < out.numel(); ++i) {
          const float v = element_as_f32(out, i);
          if (std::fabs(v) < min_normal) continue;
          if (!(element_as_f32(o2, i) == 2.0f * v)) ++lin_mismatches;
        }
        if (lin_mismatches) lin_what = "with every router weight doubled the output is not exactly doubled";
      }
      std::map<std::int32_t, int> uses;
      for (std::int32_t id : routing.ids)
        if (id >= p.first_local_expert() && id < p.first_local_expert() + p.local_experts()) ++uses[id];
      if (lin_mismatches == 0 && !uses.empty()) {
        std::int32_t star = uses.begin()->first;
        for (auto [id, n] : uses) if (n > uses[star]) star = id;
        RoutingResult r2 = routing;
        std::vector<bool> touched(static_cast<std::size_t>(p.tokens), false);
        for (std::size_t i = 0; i < r2.ids.size(); ++i)
          if (r2.ids[i] == star) { r2.weights[i] *= 2.0f; touched[i / std::size_t(r2.k)] = true; }
        const Tensor o2 = rerun_with(r2);
        for (std::int64_t t = 0; t < p.tokens; ++t)
          if (!touched[std::size_t(t)])
            for (std::int64_t c = 0; c < p.hidden; ++c)
              if (!(element_as_f32(o2, t * p.hidden + c) == element_as_f32(out, t * p.hidden + c))) ++lin_mismatches;
        if (lin_mismatches)
          lin_what = fmt::format("with expert {}'s router weights doubled, tokens that do not route to it changed", star);
      }
      if (lin_mismatches) {
        rec.status = "fail";
        rec.failed_check = "linearity";
        rec.reason = fmt::format("linearity: {} ({} element(s))", lin_what, lin_mismatches);
      }
    }
    rec.details = j.details();
    rec.metrics = {{"min_cos", j.min_cos}, {"max_rel", j.max_rel}, {"max_abs", j.max_abs},
                   {"mismatch_fraction", j.mismatch_fraction}, {"non_finite", double(j.non_finite)},
                   {"unwritten", double(j.unwritten)}, {"bit_mismatches", double(j.bit_mismatches)},
                   {"ref_norm", j.ref_norm}, {"out_norm", j.out_norm}, {"ideal_min_cos", j.ideal_min_cos},
                   {"ideal_max_rel", j.ideal_max_rel}, {"threshold_min_cos", th.min_cos}, {"threshold_max_rel", th.max_rel},
                   {"rerun_unwritten", double(rerun_unwritten)}, {"rerun_mismatches", double(rerun_mismatches)},
                   {"linearity_mismatches", double(lin_mismatches)},
                   {"kernel_us", info.median_us}, {"achieved_tbps", info.achieved_tbps}, {"achieved_tflops", info.achieved_tflops}};
    rec.token_cos = j.token_cos;
    rec.token_rel = j.token_rel;
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
