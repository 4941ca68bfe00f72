#include "harness/pipeline/token_probes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <utility>
#include <fmt/format.h>

#include "fixtures/tensor_element.hpp"
#include "kernels/runtime/red_zone.hpp"
#include "verdict/judge.hpp"

namespace moe {

namespace {
std::string probe_not_run(const std::string& why) { return "not run: " + why; }

// Guard bytes on each side and their pattern: the device red zones' (kernels/runtime/red_zone.hpp); 256, a multiple
// of 64, keeps every view 64-byte aligned.
constexpr std::size_t kGuard = kRedZoneBytes;
constexpr std::int64_t kPadRows = 4;  // rows past T in x's allocation: NaN, +Inf, -Inf, the largest finite value

// One buffer handed to the kernel, inside its own allocation: [guard][view][padding][guard]. The view's capacity
// runs to the allocation's end, as a real allocation's would.
struct Guarded {
  std::string name;
  Tensor owner;
  std::size_t view = 0;
  std::vector<std::byte> padding;  // what the padding holds (x's poisoned rows); it must stay so
};

// The padding rows of x (bf16 or f16, 2-byte elements): NaN, +Inf, -Inf, the largest finite value, repeated.
std::vector<std::byte> poisoned_rows(DType dt, std::int64_t row_elems) {
  const bool bf = dt == DType::bf16;
  const std::uint16_t pattern[4] = {std::uint16_t(bf ? 0x7FC0 : 0x7E00), std::uint16_t(bf ? 0x7F80 : 0x7C00),
                                    std::uint16_t(bf ? 0xFF80 : 0xFC00), std::uint16_t(bf ? 0x7F7F : 0x7BFF)};
  std::vector<std::byte> v(std::size_t(kPadRows * row_elems) * 2);
  for (std::int64_t r = 0; r < kPadRows; ++r)
    for (std::int64_t c = 0; c < row_elems; ++c) std::memcpy(&v[std::size_t(r * row_elems + c) * 2], &pattern[r % 4], 2);
  return v;
}

class Arena {
 public:
  // A guarded view shaped like `like` (contents to be written by the caller); `padding` follows it.
  Tensor place(const Tensor& like, std::vector<std::byte> padding = {}) {
    if (like.empty() && like.shape().empty()) return Tensor();  // an unused tensor stays unused
    Guarded g{like.name(), Tensor("guard." + like.name(), DType::u8,
                                  {std::int64_t(kGuard + like.nbytes() + padding.size() + kGuard)}),
              like.nbytes(), std::move(padding)};
    std::byte* base = g.owner.bytes();
    const std::size_t back = kGuard + g.view + g.padding.size();
    for (std::size_t i = 0; i < kGuard; ++i) base[i] = std::byte(red_zone_byte(i)), base[back + i] = std::byte(red_zone_byte(i));
    if (!g.padding.empty()) std::memcpy(base + kGuard + g.view, g.padding.data(), g.padding.size());
    Tensor v = Tensor::borrow(like.name(), like.dtype(), like.shape(), base + kGuard, g.view + g.padding.size() + kGuard);
    buffers_.push_back(std::move(g));
    return v;
  }
  // Every guard or padding byte that changed, per buffer and side, with the first offset (bytes from the view's
  // start, negative before it; after it, from its end).
  std::vector<std::string> violations(std::int64_t& bytes) const {
    std::vector<std::string> v;
    for (const Guarded& g : buffers_) {
      const auto* base = reinterpret_cast<const std::uint8_t*>(g.owner.bytes());
      // The guards compared as the device red zones' are (compare_red_zone); after the view, its padding first.
      const RedZoneChange b = compare_red_zone(RedZoneSide::before, base, kGuard);
      const std::int64_t before = b.changed, first_before = b.first;
      const auto* end = reinterpret_cast<const std::byte*>(base) + kGuard + g.view;
      std::int64_t after = 0, first_after = -1;
      for (std::size_t i = 0; i < g.padding.size(); ++i)
        if (end[i] != g.padding[i] && !after++) first_after = std::int64_t(i);
      const RedZoneChange a = compare_red_zone(RedZoneSide::after, reinterpret_cast<const std::uint8_t*>(end) + g.padding.size(), kGuard);
      if (a.changed && !after) first_after = std::int64_t(g.padding.size()) + a.first;
      after += a.changed;
      if (before) v.push_back(fmt::format("{}: {} byte(s) written before it, the first at offset {}", g.name, before, first_before));
      if (after) v.push_back(fmt::format("{}: {} byte(s) written after it, the first {} byte(s) past its end", g.name, after, first_after));
      bytes += before + after;
    }
    return v;
  }

 private:
  std::vector<Guarded> buffers_;
};


// One probe run's inputs: every tensor a guarded copy, x padded with poisoned rows, tokens rotated by one position
// (position i holds token (i + 1) % T) and two local experts' names exchanged where the variant says.
struct ProbeRun {
  Arena arena;
  Checkpoint ckpt;
  RoutingResult routing;
  std::vector<std::int64_t> source;  // output row i must equal the judged run's row source[i]
  Tensor out;
  std::int64_t masked_rows = 0;      // valid rows of x poisoned: tokens with no slot on this rank
};

// The tokens whose x row nothing on this rank may read: no slot routes to a local expert (masked ids and other
// ranks' experts alike), and no shared expert runs here (rank 0 holds the shared experts).
std::vector<bool> unread_tokens(const ProblemSpec& p, const RoutingResult& r) {
  std::vector<bool> unread(std::size_t(p.tokens), !(p.ep_rank == 0 && p.n_shared > 0));
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  for (std::int64_t t = 0; t < p.tokens; ++t)
    for (int j = 0; j < r.k; ++j) {
      const std::int32_t id = r.ids[std::size_t(t * r.k + j)];
      if (id >= first && id < first + local) unread[std::size_t(t)] = false;
    }
  return unread;
}

void copy_rows(const Tensor& src, Tensor& dst, const std::vector<std::int64_t>& source) {
  if (src.empty()) return;
  const std::size_t row = src.nbytes() / std::size_t(src.dim(0));
  for (std::size_t i = 0; i < source.size(); ++i) std::memcpy(dst.bytes() + i * row, src.bytes() + std::size_t(source[i]) * row, row);
}
// Slots a and b of the leading dimension exchanged in place (their own bytes only).
void swap_slots(Tensor& t, std::int64_t n, std::int64_t a, std::int64_t b) {
  if (t.empty()) return;
  const std::size_t slice = t.nbytes() / std::size_t(n);
  std::swap_ranges(t.bytes() + std::size_t(a) * slice, t.bytes() + std::size_t(a + 1) * slice, t.bytes() + std::size_t(b) * slice);
}

// The local experts' relabeling: the most-used local expert and its neighbour label (a ^ 1, or a - 1 for the last
// label of an odd count) exchange names. A transposition moves two experts' bytes, where relabeling all of them
// (a rotation) moved every expert weight twice per case: +20 % of a nightly case's time on the host.
struct Relabel {
  std::int64_t a = -1, b = -1;  // local indices; -1: none
  std::int32_t rename(std::int32_t id, std::int64_t first) const {
    if (a < 0) return id;
    if (id == first + a) return std::int32_t(first + b);
    if (id == first + b) return std::int32_t(first + a);
    return id;
  }
};
Relabel pick_relabel(const ProblemSpec& p, const RoutingResult& r) {
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  std::vector<std::int64_t> uses(std::size_t(std::max<std::int64_t>(local, 0)), 0);
  for (std::int32_t id : r.ids)
    if (id >= first && id < first + local) ++uses[std::size_t(id - first)];
  const auto most = std::max_element(uses.begin(), uses.end());
  if (local < 2 || *most == 0) return {};
  const std::int64_t a = most - uses.begin(), b = (a ^ 1) < local ? (a ^ 1) : a - 1;
  return {a, b};
}

struct Variant {
  bool permute = false;
  Relabel relabel;  // none: a < 0
};

// The routed experts of the working checkpoint relabeled in place while it lives, restored when it ends however
// it ends (the swap allocates nothing and cannot throw).
class RelabeledInPlace {
 public:
  RelabeledInPlace(Checkpoint& w, std::int64_t n, Relabel r)
      : t_{&w.routed.w13, &w.routed.w13_scale, &w.routed.w2, &w.routed.w2_scale, &w.routed.w13_bias, &w.routed.w2_bias},
        n_(n), r_(r) {
    swap();
  }
  ~RelabeledInPlace() { swap(); }
  RelabeledInPlace(const RelabeledInPlace&) = delete;
  RelabeledInPlace& operator=(const RelabeledInPlace&) = delete;

 private:
  void swap() noexcept {
    if (r_.a >= 0)
      for (Tensor* t : t_) swap_slots(*t, n_, r_.a, r_.b);
  }
  std::array<Tensor*, 6> t_;
  std::int64_t n_;
  Relabel r_;
};

// One probe run of the kernel. end_case() first: a kernel that keeps device copies of the checkpoint it last ran
// on, keyed by its address and its tensors' (a device plugin), must not take this run's buffers, which may reuse
// those addresses, or the relabeled bytes, for the ones it copied.
void run_probe(KernelUnderTest& kernel, const ProblemSpec& p, ProbeRun& run, Checkpoint& w, Relabel r) {
  kernel.end_case();
  const RelabeledInPlace relabeled(w, p.local_experts(), r);
  kernel.run(p, run.ckpt, run.routing, run.out);
}

// The probe checkpoint: guarded copies of the per-token inputs (x padded), the expert weights borrowed from the
// working checkpoint (relabeled in place by the caller where the variant says).
std::unique_ptr<ProbeRun> build_run(const ProblemSpec& p, Checkpoint& w, const RoutingResult& r, Variant v) {
  auto run = std::make_unique<ProbeRun>();
  const std::int64_t t = p.tokens, first = p.first_local_expert();
  run->source.resize(std::size_t(t));
  for (std::int64_t i = 0; i < t; ++i) run->source[std::size_t(i)] = v.permute ? (i + 1) % t : i;
  Checkpoint& c = run->ckpt;
  Arena& a = run->arena;
  auto per_token = [&](const Tensor& src, std::vector<std::byte> pad = {}) {
    Tensor d = a.place(src, std::move(pad));
    copy_rows(src, d, run->source);
    return d;
  };
  auto plain = [&](const Tensor& src) {
    Tensor d = a.place(src);
    if (!src.empty()) std::memcpy(d.bytes(), src.bytes(), src.nbytes());
    return d;
  };
  c.x = per_token(w.x, poisoned_rows(w.x.dtype(), p.hidden));
  // Rows of tokens nothing here may read hold the padding's poison too (NaN, +Inf, -Inf, the largest finite value).
  const std::vector<bool> unread = unread_tokens(p, r);
  const std::vector<std::byte> poison = poisoned_rows(w.x.dtype(), 1);
  for (std::int64_t i = 0; i < t; ++i)
    if (unread[std::size_t(run->source[std::size_t(i)])]) {
      for (std::int64_t col = 0; col < p.hidden; ++col)
        std::memcpy(c.x.bytes() + std::size_t(i * p.hidden + col) * 2, &poison[std::size_t(col % 4) * 2], 2);
      ++run->masked_rows;
    }
  c.router_logits = per_token(w.router_logits);
  c.topk_ids = per_token(w.topk_ids);
  c.topk_weights = per_token(w.topk_weights);
  c.score_bias = plain(w.score_bias);
  for (auto [dst, src] : {std::pair{&c.routed, &w.routed}, std::pair{&c.shared, &w.shared}})
    for (auto [d, s] : {std::pair{&dst->w13, &src->w13}, std::pair{&dst->w13_scale, &src->w13_scale},
                        std::pair{&dst->w2, &src->w2}, std::pair{&dst->w2_scale, &src->w2_scale},
                        std::pair{&dst->w13_bias, &src->w13_bias}, std::pair{&dst->w2_bias, &src->w2_bias}})
      if (!(s->empty() && s->shape().empty())) *d = Tensor::borrow(s->name(), s->dtype(), s->shape(), s->bytes(), s->capacity());
  auto rename = [&](std::int32_t id) { return v.relabel.rename(id, first); };
  if (v.relabel.a >= 0 && !c.topk_ids.empty())
    for (std::int32_t& id : c.topk_ids.span<std::int32_t>()) id = rename(id);
  RoutingResult& g = run->routing;
  g = {r.tokens, r.k, std::vector<std::int32_t>(r.ids.size()), std::vector<float>(r.weights.size())};
  for (std::int64_t i = 0; i < t; ++i)
    for (int j = 0; j < r.k; ++j) {
      const std::size_t from = std::size_t(run->source[std::size_t(i)] * r.k + j), to = std::size_t(i * r.k + j);
      g.ids[to] = rename(r.ids[from]);
      g.weights[to] = r.weights[from];
    }
  Tensor shape_of_out("out_token_probe", p.output_dtype, {p.tokens, p.hidden});
  run->out = a.place(shape_of_out);
  fill_sentinel(run->out, 1);
  return run;
}

// Output elements of the probe run whose bits differ from the judged run's row source[i]; the first such row.
std::int64_t mismatches(const ProbeRun& run, const Tensor& out, std::int64_t& first_row) {
  const std::size_t es = dtype_size(out.dtype()), row = out.nbytes() / std::size_t(std::max<std::int64_t>(1, out.dim(0)));
  std::int64_t n = 0;
  first_row = -1;
  for (std::size_t i = 0; i < run.source.size(); ++i) {
    const std::byte* a = run.out.bytes() + i * row;
    const std::byte* b = out.bytes() + std::size_t(run.source[i]) * row;
    if (std::memcmp(a, b, row) == 0) continue;
    if (first_row < 0) first_row = std::int64_t(i);
    for (std::size_t e = 0; e < row; e += es) n += std::memcmp(a + e, b + e, es) != 0;
  }
  return n;
}

// For a kernel whose rows are compared with the row bound (kNondetRowRel, harness/pipeline/probes.hpp): the valid
// rows of the probe run that are not the judged run's rows within it.
std::int64_t rows_apart(const ProbeRun& run, const Tensor& out, std::int64_t& first_row, double& worst_rel) {
  return rows_apart_from(run.out, out, run.source, false, first_row, &worst_rel);
}

std::string masked_note(std::int64_t rows) {
  return rows ? fmt::format(" and in the x rows of the {} token(s) with no slot on this rank", rows) : std::string();
}

// How far a probe run is from the judged run: elements that differ bit for bit (exact), or rows apart by the row bound.
std::int64_t differences(const ProbeRun& run, const Tensor& out, bool exact, std::int64_t& first_row, double& worst_rel) {
  return exact ? mismatches(run, out, first_row) : rows_apart(run, out, first_row, worst_rel);
}

std::int64_t rerun_variant(KernelUnderTest& kernel, const ProblemSpec& p, Checkpoint& w, const RoutingResult& r,
                           const Tensor& out, Variant v, bool exact, std::int64_t& first_row) {
  auto run = build_run(p, w, r, v);
  run_probe(kernel, p, *run, w, v.relabel);
  double ignored = 0;
  return differences(*run, out, exact, first_row, ignored);
}
}  // namespace

const char* token_probe_name(Check check) {
  switch (check) {
    case Check::token_isolation: return "token_isolation";
    case Check::red_zone: return "red_zones";
    case Check::token_permutation: return "token_permutation";
    case Check::expert_relabeling: return "expert_relabeling";
    case Check::stream_order: return "stream_order";  // the device probes' (device_probes.hpp)
    case Check::graph_replay: return "graph_replay";
    default: return nullptr;
  }
}

ProbeOutcome run_token_probes(const ProblemSpec& p, KernelUnderTest& kernel, Checkpoint& working,
                              const RoutingResult& routing, const Tensor& out, Check failed_first, bool on) {
  ProbeOutcome res;
  auto set = [&](const char* probe, std::string s) { res.status.emplace_back(probe, std::move(s)); };
  auto fail = [&](Check check, std::string why) {
    if (res.failed_check == Check::none) { res.failed_check = check; res.reason = std::move(why); }
  };
  std::string block;
  if (!on) block = probe_not_run("turned off for this command");
  else if (!kernel.rerunnable()) block = probe_not_run("the kernel cannot run a second time (its output was computed outside the harness)");
  else if (failed_first != Check::none) block = probe_not_run("the case failed first (" + to_string(failed_first) + ")");
  else if (!kernel.reads_given_checkpoint())
    block = probe_not_run("the kernel reads its own copy of the inputs, taken at prepare(), not the checkpoint run() is handed");
  if (!block.empty()) {
    for (Check c : {Check::token_isolation, Check::red_zone, Check::token_permutation, Check::expert_relabeling})
      set(token_probe_name(c), block);
    return res;
  }
  // Rows compared bit for bit (exact), or with the row bound: a deterministic kernel computing through a BLAS gets
  // the rotation with the row bound too; a non-deterministic one only the padding and the poisoned rows.
  const bool exact = kernel.rows_exact_across_layouts(p), deterministic = kernel.deterministic(p);
  const std::string nondet = probe_not_run(
      "the kernel declares itself non-deterministic (float atomics): its rows may differ between runs");
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  bool any_local = false;
  for (std::int32_t id : routing.ids) any_local |= id >= first && id < first + local;
  bool leads_with_experts = true;
  for (const Tensor* t : {&working.routed.w13, &working.routed.w13_scale, &working.routed.w2, &working.routed.w2_scale,
                          &working.routed.w13_bias, &working.routed.w2_bias})
    if (!t->empty() && (t->shape().empty() || t->dim(0) != local)) leads_with_experts = false;
  std::string perm_block = !deterministic ? nondet : p.tokens < 2 ? probe_not_run("one token: nothing to permute") : "";
  const Relabel swap = pick_relabel(p, routing);
  std::string relabel_block = !deterministic ? nondet
                              : !kernel.rereads_expert_weights()
                                  ? probe_not_run("the kernel may keep expert weights it converted in prepare() (a Python "
                                                  "kernel that does not declare rereads_expert_weights), which "
                                                  "relabeling the checkpoint's would not reach")
                              : local < 2 ? probe_not_run("fewer than 2 experts on this rank: nothing to relabel")
                              : !any_local ? probe_not_run("no token routes to an expert of this rank")
                              : !leads_with_experts ? probe_not_run("the prepared expert tensors do not lead with the local expert count")
                                                    : "";
  const Variant both{perm_block.empty(), relabel_block.empty() ? swap : Relabel{}};
  const bool relabeling = both.relabel.a >= 0;

  auto run = build_run(p, working, routing, both);
  run_probe(kernel, p, *run, working, both.relabel);
  std::int64_t guard_bytes = 0;
  std::vector<std::string> zones = run->arena.violations(guard_bytes);
  // The device buffers' guards of that run (a GPU kernel's, a device plugin's): run_probe() ended the case before it.
  for (std::string& z : kernel.device_red_zone_violations(guard_bytes)) zones.push_back(std::move(z));
  std::int64_t first_row = -1;
  double worst_rel = 0;
  const std::int64_t diff = differences(*run, out, exact, first_row, worst_rel);
  const std::int64_t combined = exact ? diff : 0, apart = exact ? 0 : diff;
  const std::int64_t masked_rows = run->masked_rows;
  run.reset();
  res.metrics["token_isolation_masked_rows"] = double(masked_rows);
  res.metrics["red_zone_bytes"] = double(guard_bytes);
  if (exact) res.metrics["token_probe_mismatches"] = double(combined);
  else res.metrics["token_isolation_rows_apart"] = double(apart), res.metrics["token_isolation_max_row_rel"] = worst_rel;

  // Which probe a difference belongs to: padding alone, then the rotation alone, then the relabeling alone.
  std::string isolation_fail, perm_fail, relabel_fail;
  const std::string what = exact ? fmt::format("{} element(s) of the output differ from", diff)
                                 : fmt::format("{} output row(s) moved by more than {} of their norm or changed "
                                               "finiteness from", diff, kNondetRowRel);
  std::int64_t row = -1;
  if (diff > 0 && (both.permute || relabeling) && rerun_variant(kernel, p, working, routing, out, {}, exact, row) == 0) {
    const bool rotation =
        both.permute && (!relabeling || rerun_variant(kernel, p, working, routing, out, {true, {}}, exact, row) > 0);
    if (rotation)
      perm_fail = fmt::format("with the tokens rotated by one position, {} the judged run's rotated rows (first at "
                              "position {}{})", what, first_row, exact ? "" : "; compared with the row bound: the kernel "
                              "computes through a BLAS");
    else
      relabel_fail = fmt::format("with local experts {} and {} relabeled as each other (weights, scales, biases, ids), "
                                 "{} the judged run (first at position {}{})", both.relabel.a, both.relabel.b, what,
                                 first_row, both.permute ? "; in the run with the tokens rotated too" : "");
  } else if (combined > 0) {
    isolation_fail = fmt::format("with NaN, Inf and huge rows past token {} in x's allocation{}, {} element(s) of the "
                                 "valid tokens' output differ from the judged run (first at position {})",
                                 p.tokens - 1, masked_note(masked_rows), combined, first_row);
  }
  if (apart > 0 && perm_fail.empty() && relabel_fail.empty())
    isolation_fail = fmt::format("with NaN, Inf and huge rows past token {} in x's allocation{}, {} valid token row(s) "
                                 "of the output moved from the judged run's by more than {} of their norm or in which "
                                 "elements are finite (first at position {}; {}, so rows are compared within that bound, not bit for bit)",
                                 p.tokens - 1, masked_note(masked_rows), apart, kNondetRowRel, first_row,
                                 deterministic ? "the kernel computes through a BLAS"
                                               : "the kernel declares itself non-deterministic");
  set(token_probe_name(Check::token_isolation), kProbeRan);
  set(token_probe_name(Check::red_zone), kProbeRan);
  set(token_probe_name(Check::token_permutation), perm_block.empty() ? std::string(kProbeRan) : perm_block);
  set(token_probe_name(Check::expert_relabeling), relabel_block.empty() ? std::string(kProbeRan) : relabel_block);
  if (!isolation_fail.empty()) fail(Check::token_isolation, "token_isolation: " + isolation_fail);
  if (!zones.empty()) {
    std::string s;
    for (const auto& z : zones) s += (s.empty() ? "" : "; ") + z;
    fail(Check::red_zone, "red zones: " + s);
  }
  if (!perm_fail.empty()) fail(Check::token_permutation, "token_permutation: " + perm_fail);
  if (!relabel_fail.empty()) fail(Check::expert_relabeling, "expert_relabeling: " + relabel_fail);
  return res;
}

}  // namespace moe
