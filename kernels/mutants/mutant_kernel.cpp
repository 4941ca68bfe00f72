#include "kernels/mutants/mutant_kernel.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "fixtures/tensor_element.hpp"

namespace moe {

namespace {

// The output mutants that change the kernel's output before its rounding: the kernel is asked for f32.
bool needs_unrounded_output(Mutation m) {
  return m == Mutation::output_gain_3pct || m == Mutation::output_gain_0p3pct || m == Mutation::output_truncated ||
         m == Mutation::output_offset || m == Mutation::sparse_token_gain || m == Mutation::channel_block_gain ||
         m == Mutation::token_orthogonal_3pct;
}

// channel_block_gain's channels: H/4 .. H/4 + H/8 - 1 (one aligned block of H/8).
bool block_channel(std::size_t c, std::size_t hidden) { return c >= hidden / 4 && c < hidden / 4 + hidden / 8; }

// token_orthogonal_3pct: frac x ||x|| along the alternating-sign vector (+1, -1, +1, ...) less its projection on x,
// normalized: an error no gain, offset or cosine-of-direction shortcut explains (zero where x or that vector is 0 or
// not finite).
std::vector<double> orthogonal_error(const float* x, std::size_t n, double frac) {
  std::vector<double> u(n);
  double xx = 0, xu = 0;
  for (std::size_t c = 0; c < n; ++c) {
    u[c] = c % 2 ? -1.0 : 1.0;
    xx += double(x[c]) * x[c];
    xu += double(x[c]) * u[c];
  }
  if (!(xx > 0) || !std::isfinite(xx)) return std::vector<double>(n, 0.0);
  double uu = 0;
  for (std::size_t c = 0; c < n; ++c) u[c] -= xu / xx * x[c], uu += u[c] * u[c];
  if (!(uu > 0)) return std::vector<double>(n, 0.0);
  for (double& v : u) v *= frac * std::sqrt(xx / uu);
  return u;
}

// The bug applied to the f32 output `raw` the kernel wrote in place of `out`; elements it left as they were
// (bit for bit the value out held) keep out's bits, so the harness's sentinel probes see them unwritten.
void finish_output(Mutation m, const Tensor& raw, const std::vector<float>& before, Tensor& out) {
  const float gain = m == Mutation::output_gain_3pct ? 1.03f : m == Mutation::output_gain_0p3pct ? 1.003f : 1.0f;
  const auto r = raw.span<float>();
  auto written = [&](std::size_t i) { return std::memcmp(&r[i], &before[i], 4) != 0; };
  double abs_sum = 0;
  std::size_t n = 0;
  if (m == Mutation::output_offset)
    for (std::size_t i = 0; i < r.size(); ++i)
      if (written(i) && std::isfinite(r[i])) abs_sum += std::fabs(r[i]), ++n;
  const float offset = n ? float(1e-3 * abs_sum / double(n)) : 0.0f;
  const std::size_t hidden = out.dim(0) > 0 ? r.size() / std::size_t(out.dim(0)) : 1;
  const std::vector<double> orthogonal =
      m == Mutation::token_orthogonal_3pct && r.size() >= hidden ? orthogonal_error(r.data(), hidden, 0.03) : std::vector<double>{};
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (!written(i)) continue;
    float v = r[i] * gain;
    if (m == Mutation::output_truncated) v = rounded_toward_zero(r[i], out.dtype());
    if (m == Mutation::output_offset) v = r[i] + offset;
    if (m == Mutation::sparse_token_gain && (i / hidden) % 32 == 0) v = r[i] * 1.02f;
    if (m == Mutation::channel_block_gain && block_channel(i % hidden, hidden)) v = r[i] * 1.01f;
    if (m == Mutation::token_orthogonal_3pct && i < hidden) v = float(r[i] + orthogonal[i]);
    store_element(out, std::int64_t(i), v);
  }
}

// reads_next_token_row: each output row times 1 + (v - v) for the element v of x's next row in the same column, where
// x's allocation holds that row (x.capacity()): 1 exactly for a finite v, NaN for NaN or Inf. Only the last token's
// next row lies past T, and only a probe's padded allocation has one.
void read_next_rows(const Tensor& x, Tensor& out) {
  if (x.empty() || out.dim(0) == 0) return;
  const std::int64_t t = out.dim(0), h = out.dim(1);
  const std::size_t row = x.nbytes() / std::size_t(x.dim(0));
  for (std::int64_t tok = 0; tok < t; ++tok) {
    if (std::size_t(tok + 2) * row > x.capacity()) break;
    const std::byte* next = x.bytes() + std::size_t(tok + 1) * row;
    for (std::int64_t c = 0; c < h; ++c) {
      std::uint16_t b;
      std::memcpy(&b, next + 2 * c, 2);
      const float v = x.dtype() == DType::bf16 ? bf16_to_f32(b) : fp16_to_f32(b);
      const float f = 1.0f + (v - v);
      if (f != 1.0f) store_element(out, tok * h + c, element_as_f32(out, tok * h + c) * f);  // x 1 is a no-op
    }
  }
}

// masked_token_read: each output row times 1 + (v - v) for its own token's element v of x in the same column: 1
// exactly for a finite v, NaN for NaN or Inf, which only the token probes' poisoned rows (tokens with no slot on this
// rank) hold.
void read_own_rows(const Tensor& x, Tensor& out) {
  if (x.empty() || out.dim(0) == 0) return;
  const std::int64_t t = out.dim(0), h = out.dim(1);
  for (std::int64_t tok = 0; tok < t; ++tok)
    for (std::int64_t c = 0; c < h; ++c) {
      const float v = element_as_f32(x, tok * h + c);
      const float f = 1.0f + (v - v);
      if (f != 1.0f) store_element(out, tok * h + c, element_as_f32(out, tok * h + c) * f);  // x 1 is a no-op
    }
}

// writes_past_output: the output's last element written once more just past its end, where the allocation
// continues (out.capacity()); the harness's own output tensors end there.
void write_past_end(Tensor& out) {
  const std::size_t es = dtype_size(out.dtype());
  if (out.nbytes() < es || out.capacity() < out.nbytes() + es) return;
  std::memcpy(out.bytes() + out.nbytes(), out.bytes() + out.nbytes() - es, es);
}

}  // namespace

ProblemSpec mutated_problem(Mutation m, const ProblemSpec& p) {
  if (mutant_level(m) != MutantLevel::io) return p;
  ProblemSpec g = p;
  switch (m) {
    case Mutation::gate_up_swapped:  // the halves read the wrong way round: the kernel told the other order
      if (p.layout != GateUpLayout::interleaved)
        g.layout = p.layout == GateUpLayout::gate_up ? GateUpLayout::up_gate : GateUpLayout::gate_up;
      break;
    case Mutation::swiglu_chunked_split:  // interleaved rows split as two chunks: the kernel told gate_up
      if (p.activation == Activation::swiglu_oai) g.layout = GateUpLayout::gate_up;
      break;
    case Mutation::shared_clamp_when_disabled: g.clamp_shared = true; break;
    case Mutation::shared_expert_dropped: g.n_shared = 0; break;
    case Mutation::biases_dropped: g.biases = false; break;
    case Mutation::output_gain_3pct:
    case Mutation::output_gain_0p3pct:
    case Mutation::output_truncated:
    case Mutation::output_offset:
    case Mutation::sparse_token_gain:
    case Mutation::channel_block_gain:
    case Mutation::token_orthogonal_3pct: g.output_dtype = DType::f32; break;
    default: break;
  }
  return g;
}

RoutingResult mutated_routing(Mutation m, const ProblemSpec& p, const Checkpoint& working, const RoutingResult& r) {
  RoutingResult g = r;
  const std::int64_t first = p.first_local_expert(), local = p.local_experts();
  auto local_of = [&](std::int32_t id) { return std::int64_t(id) - first; };
  switch (m) {
    case Mutation::router_weight_dropped: for (float& w : g.weights) w = 1.0f; break;
    case Mutation::router_weight_twice: for (float& w : g.weights) w *= w; break;
    case Mutation::routed_scaling_twice: for (float& w : g.weights) w *= p.routing.routed_scaling; break;
    case Mutation::routing_not_renormalized:
      for (std::int64_t tok = 0; tok < r.tokens; ++tok) {
        const float sum = selected_probability_sum(p, working, r, tok);
        for (int j = 0; j < r.k; ++j) g.weights[tok * r.k + j] *= sum;
      }
      break;
    case Mutation::one_token_wrong_expert:  // token 0's first slot, if it is local, reads the next local expert
      if (!g.ids.empty() && local > 0) {
        const std::int64_t e = local_of(g.ids[0]);
        if (e >= 0 && e < local) g.ids[0] = std::int32_t(first + (e + 1) % local);
      }
      break;
    case Mutation::expert_gain_2pct:      // the most-used local expert's weights 2% too large
    case Mutation::expert_partial_gain: {  // ... 10% too large on its slots but the first
      const std::int64_t most = most_used_local_expert(p, r);
      bool first_seen = false;
      for (std::size_t i = 0; i < g.ids.size(); ++i) {
        if (most < 0 || local_of(g.ids[i]) != most) continue;
        if (m == Mutation::expert_gain_2pct) g.weights[i] *= 1.02f;
        else if (first_seen) g.weights[i] *= 1.10f;
        first_seen = true;
      }
      break;
    }
    case Mutation::duplicate_slot_dropped:  // a slot on an expert the token already holds contributes nothing
      for (std::int64_t tok = 0; tok < r.tokens; ++tok)
        for (int j = 1; j < r.k; ++j) {
          const std::int32_t* ids = g.ids.data() + tok * r.k;
          if (ids[j] >= 0 && std::find(ids, ids + j, ids[j]) != ids + j) g.weights[tok * r.k + j] = 0.0f;
        }
      break;
    case Mutation::ep_sums_nonlocal:  // other ranks' experts summed through a wrapped local index
      if (local > 0)
        for (std::int32_t& id : g.ids) {
          const std::int64_t e = local_of(id);
          if (e < 0 || e >= local) id = std::int32_t(first + ((e % local) + local) % local);
        }
      break;
    default: break;
  }
  return g;
}

void mutate_working_checkpoint(Mutation m, Checkpoint& working) {
  apply_fnuz_conversion_mutant(m, working);
  if (m == Mutation::biases_dropped)
    for (ExpertWeights* w : {&working.routed, &working.shared}) w->w13_bias = Tensor(), w->w2_bias = Tensor();
}

MutantKernel::MutantKernel(std::unique_ptr<KernelUnderTest> inner, Mutation m, std::string id)
    : inner_(std::move(inner)), m_(m), id_(std::move(id)) {
  if (id_.empty()) id_ = inner_->id() + "~" + std::string(mutation_name(m));
}

void MutantKernel::prepare(const ProblemSpec& p, Checkpoint& working) {
  mutate_working_checkpoint(m_, working);
  inner_->prepare(mutated_problem(m_, p), working);
}

RunInfo MutantKernel::run(const ProblemSpec& p, const Checkpoint& working, const RoutingResult& routing, Tensor& out) {
  if (mutant_level(m_) != MutantLevel::io) return inner_->run(p, working, routing, out);
  // last_token_unwritten: the last token's row keeps what the harness put there (its sentinel).
  std::vector<std::byte> last;
  const bool keep_last = m_ == Mutation::last_token_unwritten && out.dim(0) > 0;
  const std::size_t row = keep_last ? out.nbytes() / std::size_t(out.dim(0)) : 0;
  if (keep_last) last.assign(out.bytes() + out.nbytes() - row, out.bytes() + out.nbytes());
  const ProblemSpec told = mutated_problem(m_, p);
  const RoutingResult handed = mutated_routing(m_, p, working, routing);
  RunInfo info;
  if (needs_unrounded_output(m_)) {
    Tensor raw(out.name(), DType::f32, out.shape());
    std::vector<float> before(static_cast<std::size_t>(out.numel()));
    for (std::size_t i = 0; i < before.size(); ++i) before[i] = element_as_f32(out, std::int64_t(i));
    std::memcpy(raw.bytes(), before.data(), raw.nbytes());
    info = inner_->run(told, working, handed, raw);
    finish_output(m_, raw, before, out);
  } else {
    info = inner_->run(told, working, handed, out);
  }
  if (keep_last) std::memcpy(out.bytes() + out.nbytes() - row, last.data(), row);
  if (m_ == Mutation::reads_next_token_row) read_next_rows(working.x, out);
  if (m_ == Mutation::writes_past_output) write_past_end(out);
  if (m_ == Mutation::masked_token_read) read_own_rows(working.x, out);
  if (m_ == Mutation::workspace_init_once) workspace_epilogue(out);
  if (m_ == Mutation::output_channel_zeroed && out.dim(0) > 0)
    for (std::int64_t t = 0; t < out.dim(0); ++t) store_element(out, t * out.dim(1) + out.dim(1) / 2, 0.0f);
  return info;
}

// Each element past the cleared size starts from what the workspace holds there (the output an earlier call left,
// 0 where no call reached): the kernel's output plus that, rounded to the output dtype; the workspace then holds
// this call's output. Within one size (a case's reruns and probes) nothing changes; only a later, larger call on
// the same kernel object reads stale elements. Non-finite outputs and stale values are left alone (the sentinel
// probes still see an unwritten element as unwritten).
void MutantKernel::workspace_epilogue(Tensor& out) {
  const std::size_t n = static_cast<std::size_t>(out.numel());
  if (!workspace_cleared_) workspace_cleared_ = n;
  if (workspace_.size() < n) workspace_.resize(n, 0.0f);
  for (std::size_t i = 0; i < n; ++i) {
    float v = element_as_f32(out, std::int64_t(i));
    const float stale = workspace_[i];
    if (i >= *workspace_cleared_ && std::isfinite(v) && std::isfinite(stale) && stale != 0.0f) {
      store_element(out, std::int64_t(i), v + stale);
      v = element_as_f32(out, std::int64_t(i));
    }
    workspace_[i] = v;
  }
}

}  // namespace moe
