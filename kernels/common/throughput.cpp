#include "kernels/common/throughput.hpp"

#include <algorithm>
#include <set>

namespace moe {

MoeWork moe_work(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r) {
  std::set<std::int32_t> hit;
  for (auto id : r.ids)
    if (id >= p.first_local_expert() && id < p.first_local_expert() + p.local_experts()) hit.insert(id);
  const double per_expert = double(c.routed.w13.nbytes() + c.routed.w2.nbytes()) /
                            double(std::max<std::int64_t>(1, c.routed.count()));
  const int shared = p.ep_rank == 0 ? p.n_shared : 0;
  MoeWork w;
  w.weight_bytes = per_expert * double(hit.size());
  if (shared > 0) w.weight_bytes += double(c.shared.w13.nbytes() + c.shared.w2.nbytes());
  w.flops = 2.0 * double(p.tokens) * 3.0 * double(p.hidden) *
            (double(r.k) * double(p.local_inter()) + double(shared) * double(p.local_shared_inter()));
  return w;
}

void add_throughput(RunInfo& info, const MoeWork& work) {
  if (info.median_us <= 0) return;
  info.achieved_tbps = work.weight_bytes / (info.median_us * 1e-6) / 1e12;
  info.achieved_tflops = work.flops / (info.median_us * 1e-6) / 1e12;
}

}  // namespace moe
