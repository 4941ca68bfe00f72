#include "kernels/gpu/gpu_case_buffers.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "fixtures/content_seal.hpp"
#include "fixtures/error.hpp"
#include "kernels/gpu/launch_args.hpp"

namespace moe::gpu {
namespace {

template <class T>
GuardedBuffer upload(const std::vector<T>& v, const char* name) {
  GuardedBuffer b(v.size() * sizeof(T), name);
  b.upload(v.data(), v.size() * sizeof(T));
  return b;
}

bool any_launch(const Plan& plan, bool (*what)(const LaunchPlan&)) {
  return std::any_of(plan.launches.begin(), plan.launches.end(), what);
}

}  // namespace

GuardedBuffer upload_guarded(const Tensor& t, bool tail) {
  const std::size_t n = tail ? t.capacity() : t.nbytes();  // capacity() >= nbytes() (Tensor::borrow)
  GuardedBuffer b(n, "device " + t.name());
  b.upload(t.bytes(), n);
  return b;
}

std::vector<std::uint64_t> input_digests(const ProblemSpec& p, const Checkpoint& c) {
  const std::array<const Tensor*, kInputSlots> in = input_tensors(p, c);
  std::vector<std::uint64_t> d = chunk_digests({in.begin(), in.end()});
  const Tensor& x = *in[0];
  if (x.capacity() > x.nbytes()) d[0] = hash_bytes(x.bytes() + x.nbytes(), x.capacity() - x.nbytes(), d[0]);
  return d;
}

std::array<const Tensor*, kInputSlots> input_tensors(const ProblemSpec& p, const Checkpoint& c) {
  static const Tensor none;
  const ExpertWeights* s = p.n_shared > 0 ? &c.shared : nullptr;
  auto sh = [&](const Tensor ExpertWeights::*m) { return s ? &(s->*m) : &none; };
  return {&c.x, &c.routed.w13, &c.routed.w2, &c.routed.w13_bias, &c.routed.w2_bias, &c.routed.w13_scale,
          &c.routed.w2_scale, sh(&ExpertWeights::w13), sh(&ExpertWeights::w2), sh(&ExpertWeights::w13_bias),
          sh(&ExpertWeights::w2_bias), sh(&ExpertWeights::w13_scale), sh(&ExpertWeights::w2_scale)};
}

CaseBuffers::CaseBuffers(const ProblemSpec& p, const Checkpoint& c, const std::vector<std::uint64_t>& digests,
                         ResidentDeviceInputs& resident, const RoutingResult& r,
                         const std::vector<float>& router_weights, const Plan& plan, std::size_t out_bytes)
    : whole(case_args(p)) {
  if (r.k != p.topk) throw_harness_error("CaseBuffers", "the routing's k is not the case's top-k");
  const std::array<const Tensor*, kInputSlots> in = input_tensors(p, c);
  if (digests.size() != in.size()) throw_harness_error("CaseBuffers", "one digest per input slot expected");
  const std::int64_t t = p.tokens, h = p.hidden, slot_rows = t * (p.topk + p.n_shared);
  const auto t0 = std::chrono::steady_clock::now();
  std::array<const void*, kInputSlots> dev{};
  for (std::size_t i = 0; i < in.size(); ++i) {
    const bool tail = i == 0;  // x: its padding rows past T too, where its allocation holds them
    const GuardedBuffer* b = resident.use(i, *in[i], digests[i], [tail](const Tensor& t) { return upload_guarded(t, tail); });
    dev[i] = b ? b->get() : nullptr;
  }
  ids = upload(r.ids, "device ids");
  weights = upload(router_weights, "device weights");
  upload_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::int64_t max_inter = std::max(p.local_inter(), p.n_shared ? p.local_shared_inter() : 0);
  mid = GuardedBuffer(std::size_t(slot_rows * max_inter) * sizeof(float), "device mid");
  slots = GuardedBuffer(p.reduce == ReduceMode::fused_atomic ? 0 : std::size_t(slot_rows * h) * sizeof(float), "device slots");
  acc = GuardedBuffer(std::size_t(t * h) * sizeof(float), "device acc");
  outs.emplace_back(out_bytes, "device out");

  FusedMoeArgs& a = whole;
  a.x = dev[0];
  a.routed.w13 = dev[1], a.routed.w2 = dev[2];
  a.routed.b13 = static_cast<const float*>(dev[3]), a.routed.b2 = static_cast<const float*>(dev[4]);
  a.routed.s13 = dev[5], a.routed.s2 = dev[6];
  a.routed.fnuz = c.routed.w13.dtype() == DType::e4m3fnuz;
  a.shared.w13 = dev[7], a.shared.w2 = dev[8];
  a.shared.b13 = static_cast<const float*>(dev[9]), a.shared.b2 = static_cast<const float*>(dev[10]);
  a.shared.s13 = dev[11], a.shared.s2 = dev[12];
  a.shared.fnuz = c.shared.w13.dtype() == DType::e4m3fnuz;
  if (any_launch(plan, [](const LaunchPlan& l) { return l.prepare_inputs; })) {
    xq_routed = GuardedBuffer(std::size_t((a.weight_on_input ? slot_rows : t) * h) * sizeof(float), "device xq_routed");
    a.xq_routed = static_cast<float*>(xq_routed.get());
    if (a.n_shared > 0) {
      xq_shared = GuardedBuffer(std::size_t(t * h) * sizeof(float), "device xq_shared");
      a.xq_shared = static_cast<float*>(xq_shared.get());
    }
  }
  a.topk_ids = static_cast<const std::int32_t*>(ids.get());
  a.topk_weights = static_cast<const float*>(weights.get());
  a.mid = static_cast<float*>(mid.get());
  a.slots = static_cast<float*>(slots.get());
  a.acc = static_cast<float*>(acc.get());
  a.out = outs[0].get();
  if (any_launch(plan, [](const LaunchPlan& l) { return l.path != StagePath::one_stage && l.path != StagePath::row_wise; })) {
    const std::int64_t sets = a.local_experts + a.n_shared;  // the sort buffers, for every set
    sort = GuardedBuffer(std::size_t(4 * sets + 2 + slot_rows) * sizeof(std::int32_t), "device sort");
    auto* base = static_cast<std::int32_t*>(sort.get());
    a.expert_counts = base;
    a.expert_offsets = base + sets;
    a.expert_cursor = base + 2 * sets + 1;
    a.sorted_slots = base + 3 * sets + 1;
    a.active_sets = base + 3 * sets + 1 + slot_rows;
  }
  for (std::size_t i = 1; i < plan.launches.size(); ++i) outs.emplace_back(out_bytes, "device out (launch " + std::to_string(i) + ")");
}

void CaseBuffers::check_red_zones(std::vector<std::string>& violations, std::int64_t& bytes) {
  for (GuardedBuffer* b : {&ids, &weights, &mid, &slots, &acc, &xq_routed, &xq_shared, &sort}) b->check(violations, bytes);
  for (GuardedBuffer& o : outs) o.check(violations, bytes);
}

FusedMoeArgs CaseBuffers::launch(const Plan& plan, std::size_t i) const {
  FusedMoeArgs a = launch_args(whole, plan.launches.at(i));
  a.out = outs.at(i).get();
  return a;
}

}  // namespace moe::gpu
