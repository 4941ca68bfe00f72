#include "kernels/gpu/gpu_routing.hpp"

#include "fixtures/error.hpp"
#include "kernels/moe/routing.hpp"
#include "kernels/runtime/gpu_runtime.hpp"

namespace moe {

RoutingResult gpu_route(const ProblemSpec& p, const Checkpoint& c) {
  if (p.routing.kind == RoutingKind::precomputed)
    throw_harness_error("gpu_route", "precomputed routing has nothing to route", "call it for computed routings only");
  gpu::RoutingArgs a;
  a.mode = p.routing.kind == RoutingKind::softmax_topk ? gpu::RoutingMode::softmax_topk
         : p.routing.kind == RoutingKind::grouped_sigmoid ? gpu::RoutingMode::grouped_sigmoid : gpu::RoutingMode::sigmoid_top1;
  a.tokens = p.tokens; a.experts = int(p.experts); a.topk = p.topk;
  a.n_group = p.routing.n_group; a.topk_group = p.routing.topk_group;
  a.renormalize = p.routing.renormalize; a.routed_scaling = p.routing.routed_scaling;
  gpu::DeviceBuffer logits(c.router_logits.nbytes()), bias(c.score_bias.nbytes());
  logits.upload(c.router_logits.bytes(), c.router_logits.nbytes());
  bias.upload(c.score_bias.bytes(), c.score_bias.nbytes());
  gpu::DeviceBuffer ids(std::size_t(p.tokens * p.topk) * 4), wts(std::size_t(p.tokens * p.topk) * 4);
  a.logits = static_cast<const float*>(logits.get());
  a.bias = static_cast<const float*>(bias.get());
  a.ids = static_cast<std::int32_t*>(ids.get());
  a.weights = static_cast<float*>(wts.get());
  gpu::launch_routing(a);
  gpu::synchronize();
  RoutingResult r{p.tokens, p.topk, std::vector<std::int32_t>(std::size_t(p.tokens * p.topk)),
                  std::vector<float>(std::size_t(p.tokens * p.topk))};
  ids.download(r.ids.data(), r.ids.size() * 4);
  wts.download(r.weights.data(), r.weights.size() * 4);
  return r;
}

}  // namespace moe
