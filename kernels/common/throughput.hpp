// A timed run's speed, counted one way for every kernel that times itself: the expert-weight bytes the case must read
// and the GEMM FLOPs it must do, over the median time (RunInfo::achieved_tbps, achieved_tflops).
#pragma once
#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "kernels/kernel_under_test.hpp"
#include "reference/routing/routing.hpp"

namespace moe {

struct MoeWork {
  double weight_bytes = 0;  // w13 and w2 codes (no scales, no biases) of each local expert the routing hits, once,
                            // and of the shared experts on EP rank 0
  double flops = 0;         // 2 per multiply-add: 3 H x inter products per routed slot and per shared expert (rank 0)
};
MoeWork moe_work(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r);

// Sets info.achieved_tbps and info.achieved_tflops from info.median_us (left as they are when it is not positive).
void add_throughput(RunInfo& info, const MoeWork& work);

}  // namespace moe
