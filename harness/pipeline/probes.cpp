#include "harness/pipeline/probes.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

#include "verdict/judge.hpp"
#include "fixtures/tensor_element.hpp"

namespace moe {

namespace {
std::string not_run(const std::string& why) { return "not run: " + why; }

Tensor rerun_into_inverse_sentinel(KernelUnderTest& kernel, const ProblemSpec& p, const Checkpoint& working,
                                   const RoutingResult& r, const char* name) {
  Tensor o(name, p.output_dtype, {p.tokens, p.hidden});
  fill_sentinel(o, 1);
  kernel.run(p, working, r, o);
  return o;
}
}  // namespace

ProbeOutcome run_probes(const ProblemSpec& p, KernelUnderTest& kernel, const Checkpoint& working,
                        const RoutingResult& routing, const Tensor& out, Check failed_first,
                        ProbeSwitches on) {
  ProbeOutcome res;
  auto set = [&](const char* probe, std::string s) { res.status.emplace_back(probe, std::move(s)); };
  auto fail = [&](Check check, std::string why) {
    if (res.failed_check == Check::none) { res.failed_check = check; res.reason = std::move(why); }
  };
  const bool deterministic = kernel.deterministic(p);
  // Why a probe cannot run whatever the case: the first that applies, else "".
  auto blocked = [&](bool switched_on, bool needs_determinism) -> std::string {
    if (!switched_on) return not_run("turned off for this command");
    if (!kernel.rerunnable()) return not_run("the kernel cannot run a second time (its output was computed outside the harness)");
    if (failed_first != Check::none) return not_run("the case failed first (" + to_string(failed_first) + ")");
    if (needs_determinism && !deterministic)
      return not_run("the kernel declares itself non-deterministic (float atomics), so reruns may differ");
    return "";
  };

  // Rerun into the second (inverse-pattern) sentinel: every element written again; bit for bit if deterministic.
  const std::string rerun_block = blocked(on.rerun, false);
  if (!rerun_block.empty()) {
    set("rerun", rerun_block);
    set("rerun_identical", rerun_block);
  } else {
    const Tensor out2 = rerun_into_inverse_sentinel(kernel, p, working, routing, "out2");
    const std::uint32_t s2 = sentinel_bits(p.output_dtype, 1);
    const bool two = dtype_size(p.output_dtype) == 2;
    std::int64_t unwritten = 0, mismatches = 0;
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      const std::uint32_t a = two ? out.span<std::uint16_t>()[i] : out.span<std::uint32_t>()[i];
      const std::uint32_t b = two ? out2.span<std::uint16_t>()[i] : out2.span<std::uint32_t>()[i];
      if (b == s2) ++unwritten;
      else if (a != b) ++mismatches;
    }
    set("rerun", kProbeRan);
    set("rerun_identical", deterministic ? std::string(kProbeRan) : blocked(true, true));
    res.metrics["rerun_unwritten"] = double(unwritten);
    res.metrics["rerun_mismatches"] = double(mismatches);  // measured either way; failed only if deterministic
    if (unwritten > 0 || (deterministic && mismatches > 0))
      fail(Check::rerun, fmt::format("rerun: the second run into the inverse sentinel left {} element(s) unwritten and "
                                "differs from the first in {} element(s) (the kernel declares itself {})",
                                unwritten, mismatches, deterministic ? "deterministic" : "non-deterministic"));
  }

  // Linearity probes (exact, so only on kernels that declare themselves deterministic). Router weights are applied
  // to each expert's output as a product, so scaling them by 2 is exact everywhere downstream; (1) catches weights
  // dropped, applied twice, before a bias or on the input, or mixed into anything else; (2) one token's or
  // expert's work leaking into another's.
  const std::string lin_block = res.failed_check != Check::none ? not_run("the rerun probe failed first") : blocked(on.linearity, true);
  if (!lin_block.empty()) {
    set("linearity_all_weights", lin_block);
    set("linearity_one_expert", lin_block);
    return res;
  }
  std::int64_t lin_mismatches = 0;
  bool lin_ran = false;
  std::string lin_what;
  const bool shared_here = p.n_shared > 0 && p.ep_rank == 0;
  if (p.router_weight_on != RouterWeightOn::output) {
    set("linearity_all_weights", not_run("the router weight is applied to the input, where doubling it is not exact"));
  } else if (shared_here) {
    set("linearity_all_weights", not_run("a shared expert on this rank adds an output no router weight scales"));
  } else {
    RoutingResult r2 = routing;
    for (float& w : r2.weights) w *= 2.0f;
    const Tensor o2 = rerun_into_inverse_sentinel(kernel, p, working, r2, "out_linearity");
    // Doubling commutes with rounding except below the output dtype's smallest normal (its grid is uniform there):
    // such elements are not compared (f16's is 2^-14, within reach of real outputs).
    const float min_normal = p.output_dtype == DType::f16 ? 0x1p-14f : 0x1p-126f;
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      const float v = element_as_f32(out, i);
      if (std::fabs(v) < min_normal) continue;
      if (!(element_as_f32(o2, i) == 2.0f * v)) ++lin_mismatches;
    }
    set("linearity_all_weights", kProbeRan);
    lin_ran = true;
    if (lin_mismatches) lin_what = "with every router weight doubled the output is not exactly doubled";
  }
  std::map<std::int32_t, int> uses;
  for (std::int32_t id : routing.ids)
    if (id >= p.first_local_expert() && id < p.first_local_expert() + p.local_experts()) ++uses[id];
  if (lin_mismatches) {
    set("linearity_one_expert", not_run("the all-weights probe failed first"));
  } else if (uses.empty()) {
    set("linearity_one_expert", not_run("no token routes to an expert of this rank"));
  } else {
    std::int32_t star = uses.begin()->first;
    for (auto [id, n] : uses) if (n > uses[star]) star = id;
    RoutingResult r2 = routing;
    std::vector<bool> touched(static_cast<std::size_t>(p.tokens), false);
    for (std::size_t i = 0; i < r2.ids.size(); ++i)
      if (r2.ids[i] == star) { r2.weights[i] *= 2.0f; touched[i / std::size_t(r2.k)] = true; }
    const Tensor o2 = rerun_into_inverse_sentinel(kernel, p, working, r2, "out_linearity");
    for (std::int64_t t = 0; t < p.tokens; ++t)
      if (!touched[std::size_t(t)])
        for (std::int64_t c = 0; c < p.hidden; ++c)
          if (!(element_as_f32(o2, t * p.hidden + c) == element_as_f32(out, t * p.hidden + c))) ++lin_mismatches;
    set("linearity_one_expert", kProbeRan);
    lin_ran = true;
    if (lin_mismatches)
      lin_what = fmt::format("with expert {}'s router weights doubled, tokens that do not route to it changed", star);
  }
  if (lin_ran) res.metrics["linearity_mismatches"] = double(lin_mismatches);
  if (lin_mismatches) fail(Check::linearity, fmt::format("linearity: {} ({} element(s))", lin_what, lin_mismatches));
  return res;
}

std::int64_t rows_apart_from(const Tensor& got, const Tensor& expected, const std::vector<std::int64_t>& source,
                             bool exact, std::int64_t& first_row, double* worst_rel) {
  const std::int64_t rows = std::int64_t(source.size()), h = rows ? expected.numel() / rows : 0;
  const std::size_t row_bytes = rows ? expected.nbytes() / std::size_t(rows) : 0;
  std::int64_t n = 0;
  first_row = -1;
  if (worst_rel) *worst_rel = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t s = source[std::size_t(i)];
    bool apart = false;
    if (exact) {
      apart = std::memcmp(got.bytes() + std::size_t(i) * row_bytes, expected.bytes() + std::size_t(s) * row_bytes, row_bytes) != 0;
    } else {
      double d2 = 0, n2 = 0;
      bool finiteness_differs = false;
      for (std::int64_t c = 0; c < h; ++c) {
        const double a = element_as_f32(got, i * h + c), b = element_as_f32(expected, s * h + c);
        if (std::isfinite(a) != std::isfinite(b)) finiteness_differs = true;
        if (std::isfinite(a) && std::isfinite(b)) d2 += (a - b) * (a - b), n2 += b * b;
      }
      const double rel = finiteness_differs ? INFINITY : n2 > 0 ? std::sqrt(d2 / n2) : d2 > 0 ? INFINITY : 0.0;
      if (worst_rel) *worst_rel = std::max(*worst_rel, rel);
      apart = rel > kNondetRowRel;
    }
    if (apart && first_row < 0) first_row = i;
    n += apart;
  }
  return n;
}


}  // namespace moe
