// Fused MoE kernels (bf16/fp16, fp8 and MX weights; quantized activations). Written against the HIP runtime API
// (kernels/runtime/hip_compat.hpp maps it to CUDA on NVIDIA). No warp-size assumption anywhere: block reductions go
// through shared memory with any block size, and lane exchanges stay within groups of 16 lanes.
//
// Work decomposition: a "slot" is one (token, routed k) or (token, shared expert) pair, slot = t * (k + S) + j.
//  grouped (two-stage, rows a multiple of 8; the default): slots are sorted by expert set on the device (count,
//             scan, scatter; the scan also lists the sets that hold slots); stage 1 grid (tile of 16 intermediate
//             rows, listed set) reads each gate/up row once per pass over up to 8 of the set's tokens, a 16-byte
//             chunk per lane and step -> activation -> rounded to the intermediate dtype -> mid[slot, i]; stage 2
//             grid (tile of 16 hidden rows, listed set) likewise for w2, then reduces (atomic into acc, or per-slot
//             rows). Every slot's sums run over the same lanes in the same order whichever pass holds it.
//             Many-token passes of bf16/fp16 GEMMs run on matrix instructions instead where the build has them
//             (mma_stages.hip; StagePath::grouped_mma, kernels/gpu/dispatch_plan.cpp says when).
//  row-wise two-stage (other shapes): stage1 grid (slot, inter tile of kRows) computes kRows gate/up pairs per
//             block; stage2 grid (slot, hidden tile of kRows); each slot reads its expert's weights itself.
//  one-stage: one block per slot does both stages with the intermediate in shared memory (asked for by the case).
// Pieces: device_numerics.hpp (formats, activation quantization), weight_loads.hpp (weight decode), slot_ops.hpp
// (one slot's inputs and outputs), rowwise_stages.hpp, grouped_stages.hpp; this file: input preparation,
// quantization of whole rows, the final reduce, and the launcher that runs the path a LaunchPlan names
// (kernels/gpu/dispatch_plan.hpp picks it).
#include <cstdint>
#include <type_traits>

#include "kernels/moe/fused_moe.hpp"
#include "kernels/moe/grouped_stages.hpp"
#include "kernels/moe/mma_decode.hpp"
#include "kernels/moe/mma_stages.hpp"
#include "kernels/moe/rowwise_stages.hpp"
#include "kernels/runtime/gpu_check.hpp"
#include "kernels/runtime/hip_compat.hpp"
#ifdef MOE_GPU_MUTANTS
#include "kernels/mutants/fault_mutants.hpp"  // device faults, in the mutant build only
#endif

namespace moe::gpu {
namespace {

// Stage-1 inputs as fp32 rows before quantization: x per token for each set, or, with the router weight on the
// input, x * w rounded to the input dtype per routed slot (what the model feeds the expert).
__global__ void prepare_inputs_kernel(FusedMoeArgs a) {
  const std::int64_t rows = a.weight_on_input ? a.tokens * (a.topk + a.n_shared) : a.tokens;
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < rows * a.hidden; i += stride) {
    if (a.weight_on_input) {
      const SlotInfo s = slot_info(a, i / a.hidden);
      const float x = load(a.x, s.token * a.hidden + i % a.hidden, a.in_type);
      a.xq_routed[i] = s.shared ? x : weigh_input(a, s, x);
    } else {
      a.xq_routed[i] = load(a.x, i, a.in_type);
    }
  }
  if (a.xq_shared)
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < a.tokens * a.hidden; i += stride)
      a.xq_shared[i] = load(a.x, i, a.in_type);
}

// Fake-quantizes rows [n, k] (row stride `stride`) per group: the whole row (per token; the launcher sends those to
// quantize_token_rows_kernel below), 128 columns, or 32 (MX), one group per kLanesQ lanes. With per > 0 only the
// rows whose slot belongs to the wanted set (shared: slot % per >= topk) are touched. Every lane of a block runs the
// same number of iterations (the shuffles).
__global__ void quantize_rows_kernel(float* rows, std::int64_t n, std::int64_t k, std::int64_t stride, ActQuant q,
                                     int per, int topk, bool want_shared, float forced_scale) {
  const std::int64_t group = q.kind == ActFormat::fp8_token ? k : q.kind == ActFormat::fp8_group128 ? 128 : 32;
  const std::int64_t groups = (k + group - 1) / group;
  const std::int64_t per_block = blockDim.x / kLanesQ;
  const int lane = int(threadIdx.x) % kLanesQ;
  for (std::int64_t base = std::int64_t(blockIdx.x) * per_block; base < n * groups; base += std::int64_t(gridDim.x) * per_block) {
    const std::int64_t g = base + threadIdx.x / kLanesQ;
    const std::int64_t r = g / groups, c0 = (g % groups) * group;
    const bool active = g < n * groups && (per == 0 || ((r % per) >= topk) == want_shared);
    fake_quantize_group(rows + (active ? r * stride + c0 : 0), active ? min(group, k - c0) : 0, q, forced_scale, lane, active);
  }
}

// The same for per-token groups (a whole row, thousands of values): one block per row, so that a row's values are
// spread over the block instead of 16 lanes (16 tokens were 16 x 16 lanes of the whole GPU, 36 us). The amax meets
// in 16-lane butterflies, then through shared memory; every thread forms the same scale from it, and each element
// is quantized exactly as above. Any block size up to kMaxQuantThreads, a multiple of kLanesQ.
constexpr int kMaxQuantThreads = 1024;
__global__ void quantize_token_rows_kernel(float* rows, std::int64_t n, std::int64_t k, std::int64_t stride, ActQuant q,
                                           int per, int topk, bool want_shared, float forced_scale) {
  __shared__ float part[kMaxQuantThreads / kLanesQ];
  const int groups = int(blockDim.x) / kLanesQ;
  for (std::int64_t r = blockIdx.x; r < n; r += gridDim.x) {
    if (per != 0 && ((r % per) >= topk) != want_shared) continue;  // the same for the whole block
    float* v = rows + r * stride;
    const float amax16 = group_amax(v, k, threadIdx.x, blockDim.x, true);
    if (threadIdx.x % kLanesQ == 0) part[threadIdx.x / kLanesQ] = amax16;
    __syncthreads();
    float amax = 0.0f;
    for (int j = 0; j < groups; ++j) amax = part[j] > amax ? part[j] : amax;
    __syncthreads();  // every thread has read part before the next row writes it
    fake_quantize_values(v, k, q, forced_scale, amax, threadIdx.x, blockDim.x);
  }
}

// out[t, :] = acc[t, :] (fused_atomic) or the k-ordered sum of the slots that hold a local expert (separate).
__global__ void finalize_kernel(FusedMoeArgs a) {
  const std::int64_t n = a.tokens * a.hidden;
  const int per = a.topk + a.n_shared;
  for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
    float v;
    if (a.reduce == ReduceMode::fused_atomic) {
      v = a.acc[i];
    } else {
      const std::int64_t t = i / a.hidden, c = i % a.hidden;
      v = 0.0f;
      for (int j = 0; j < per; ++j) {
        const SlotInfo s = slot_info(a, t * per + j);
        if (s.valid) v += a.slots[(t * per + j) * a.hidden + c];
      }
    }
    if (MOE_MUT(reads_past_device_x)) {  // times 1 + (u - u) for the next row's u of x, where x's allocation holds one
      const std::int64_t t = i / a.hidden;
      if (t + 1 < MOE_MUT_X_ROWS) {
        const float u = load(a.x, (t + 1) * a.hidden + i % a.hidden, a.in_type);
        v *= 1.0f + (u - u);
      }
    }
    store(a.out, i, v, a.out_type);
    if (MOE_MUT(writes_past_device_output) && i == n - 1) store(a.out, n, v, a.out_type);  // one element past the end
  }
}

// Calls fn(std::integral_constant<int, F>) for the routed experts' weight format: one instantiation per format.
template <class Fn>
void dispatch_format(WeightFormat f, Fn&& fn) {
  switch (f) {
    case WeightFormat::bf16: fn(std::integral_constant<int, int(WeightFormat::bf16)>{}); return;
    case WeightFormat::fp16: fn(std::integral_constant<int, int(WeightFormat::fp16)>{}); return;
    case WeightFormat::fp8_tensor: fn(std::integral_constant<int, int(WeightFormat::fp8_tensor)>{}); return;
    case WeightFormat::fp8_channel: fn(std::integral_constant<int, int(WeightFormat::fp8_channel)>{}); return;
    case WeightFormat::fp8_block: fn(std::integral_constant<int, int(WeightFormat::fp8_block)>{}); return;
    case WeightFormat::mxfp8: fn(std::integral_constant<int, int(WeightFormat::mxfp8)>{}); return;
    case WeightFormat::mxfp4: fn(std::integral_constant<int, int(WeightFormat::mxfp4)>{}); return;
  }
  throw_harness_error("launch_fused_moe", "unknown weight format");
}

// One grouped stage for the routed format, at its chunk width, then (when their format differs) the shared sets;
// kTokFew or kTokMany tokens per pass, as the plan says.
template <int Stage>
void launch_grouped(const FusedMoeArgs& a, int tokens_per_pass, dim3 grid, std::int64_t mid_stride, int sets) {
  static_assert(kTokFew == 2 && kTokMany == 8, "LaunchPlan::tokens_per_pass (fused_moe.hpp) names these two");
  if (tokens_per_pass != kTokFew && tokens_per_pass != kTokMany)
    throw_harness_error("launch_fused_moe", "the grouped path runs 2 or 8 tokens per pass");
  const bool few = tokens_per_pass == kTokFew;
  dispatch_format(a.routed.wfmt, [&](auto f) {
    constexpr int F = decltype(f)::value, V = kChunkWidth<F>;
    if (few) grouped_stage_kernel<F, V, kTokFew, Stage><<<grid, dim3(kThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
    else grouped_stage_kernel<F, V, kTokMany, Stage><<<grid, dim3(kThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride, sets);
  });
  MOE_GPU_CHECK_LAUNCH(Stage == 1 ? "grouped_stage_kernel (stage 1)" : "grouped_stage_kernel (stage 2)");
  if (a.n_shared > 0 && a.shared.wfmt != a.routed.wfmt) {
    const dim3 g(grid.x, unsigned(a.n_shared));
    if (few) grouped_other_format_kernel<kTokFew, Stage><<<g, dim3(kThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride);
    else grouped_other_format_kernel<kTokMany, Stage><<<g, dim3(kThreads), 0, MOE_LAUNCH_STREAM>>>(a, mid_stride);
    MOE_GPU_CHECK_LAUNCH(Stage == 1 ? "grouped_other_format_kernel (stage 1)" : "grouped_other_format_kernel (stage 2)");
  }
}

}  // namespace

#ifdef MOE_GPU_MUTANTS
void set_fused_moe_mutant(const MutantLaunch& mutant) {
  MutantLaunch m = mutant;
  if (m.mutation != int(Mutation::e8m0_scale_off_by_one)) m.expert = -1;
  // Copied to constant memory only when it changed: a synchronous copy on the legacy stream, which a launch on
  // another stream (the device probes: a graph capture, a held legacy stream) must not need.
  // Every field is compared: a field left out keeps the device's copy of it stale (x_rows changes between a case's
  // verdict run and its token probe's; it is set for reads_past_device_x alone, so no other mutant copies again).
  if (g_mutant_device_set && g_mutant_host.mutation == m.mutation && g_mutant_host.expert == m.expert &&
      g_mutant_host.tensor_scale == m.tensor_scale && g_mutant_host.x_rows == m.x_rows)
    return;
  g_mutant_host = m;
  MOE_GPU_CHECK(hipMemcpyToSymbol(HIP_SYMBOL(g_mutant_device), &m, sizeof m));
  g_mutant_device_set = true;
}

void MOE_LAUNCH_FUSED_MOE(const FusedMoeArgs& a, const LaunchPlan& plan, const MutantLaunch& mutant) {
  set_fused_moe_mutant(mutant);  // ordered before the launches below
#else
void MOE_LAUNCH_FUSED_MOE(const FusedMoeArgs& a, const LaunchPlan& plan) {
#endif
  const std::int64_t slots = a.tokens * (a.topk + a.n_shared);
  const std::int64_t max_inter = a.routed.inter > a.shared.inter ? a.routed.inter : a.shared.inter;
  if (slots == 0) return;
#ifdef MOE_GPU_MUTANTS
  launch_fault_mutant(a);
#endif
  if (a.fail_launch_for_test) {
    // 4096 threads per block exceeds every vendor's limit: the launch itself fails.
    one_stage_kernel<0><<<dim3(1), dim3(4096), 0, MOE_LAUNCH_STREAM>>>(a);
    MOE_GPU_CHECK_LAUNCH("one_stage_kernel (test hook: invalid launch)");
  }
  const bool quant = quantizes_activations(a);
  const bool one_stage = plan.path == StagePath::one_stage;
  const bool grouped = plan.path == StagePath::grouped || plan.path == StagePath::grouped_mma ||
                       plan.path == StagePath::grouped_mma_decode;
  const bool mma = plan.path == StagePath::grouped_mma, dmma = plan.path == StagePath::grouped_mma_decode;
  if (quant && one_stage)
    throw_harness_error("launch_fused_moe", "quantized activations need the two-stage path (the plan picks it)");
  if (a.reduce != plan.reduce)
    throw_harness_error("launch_fused_moe", "the arguments' reduce mode is not the plan's (kernels/gpu/launch_args.hpp)");
#ifdef MOE_GPU_MUTANTS
  if (mma || dmma)  // the mutants live in the other kernels
    throw_harness_error("launch_fused_moe_mutant", "the mutant build has no matrix-instruction kernels (plan with BuildCaps{})");
#endif
  if (plan.prepare_inputs != (quant || dmma))  // the inputs are prepared for those two only
    throw_harness_error("launch_fused_moe", "prepared inputs are for quantized activations and the decode mma kernels");
  const int per = a.topk + a.n_shared;
  auto quantize = [&](float* rows, std::int64_t n, std::int64_t k, std::int64_t stride, const ActQuant& q, int p,
                      bool shared, const char* what, float forced_scale = 0.0f) {
    if (q.kind == ActFormat::none || n == 0 || k == 0) return;
    if (q.kind == ActFormat::fp8_token)
      quantize_token_rows_kernel<<<dim3(unsigned(n < 1024 ? n : 1024)), dim3(256), 0, MOE_LAUNCH_STREAM>>>(rows, n, k, stride, q, p, a.topk, shared, forced_scale);
    else
      quantize_rows_kernel<<<dim3(1024), dim3(128), 0, MOE_LAUNCH_STREAM>>>(rows, n, k, stride, q, p, a.topk, shared, forced_scale);
    MOE_GPU_CHECK_LAUNCH(what);
  };
  if (plan.prepare_inputs) {
    if (!a.xq_routed || (a.n_shared > 0 && !a.xq_shared))
      throw_harness_error("launch_fused_moe", "prepared inputs need xq_routed (and xq_shared with shared experts)");
    prepare_inputs_kernel<<<dim3(1024), dim3(256), 0, MOE_LAUNCH_STREAM>>>(a);
    MOE_GPU_CHECK_LAUNCH("prepare_inputs_kernel");
    const float forced = MOE_MUT(per_tensor_act_scale) && a.routed.aq.kind == ActFormat::fp8_token ? MOE_MUT_TENSOR_SCALE : 0.0f;
    if (a.weight_on_input) quantize(a.xq_routed, slots, a.hidden, a.hidden, a.routed.aq, per, false, "quantize_rows_kernel (x, routed slots)", forced);
    else quantize(a.xq_routed, a.tokens, a.hidden, a.hidden, a.routed.aq, 0, false, "quantize_rows_kernel (x, routed)", forced);
    if (a.n_shared > 0) quantize(a.xq_shared, a.tokens, a.hidden, a.hidden, a.shared.aq, 0, false, "quantize_rows_kernel (x, shared)");
  }
  if (one_stage) {
    if (max_inter > kOneStageMaxInter)
      throw_harness_error("launch_fused_moe", "one-stage kernel called with inter above its shared-memory limit");
    dispatch_format(a.routed.wfmt, [&](auto f) {
      one_stage_kernel<decltype(f)::value><<<dim3(unsigned(slots)), dim3(kThreads), 0, MOE_LAUNCH_STREAM>>>(a);
    });
    MOE_GPU_CHECK_LAUNCH("one_stage_kernel");
  } else {
    const int sets = int(a.local_experts + a.n_shared);
    const unsigned active_grid = unsigned(slots < sets ? slots : sets);  // a set with slots holds at least one
    if (grouped) {
      if (!a.expert_counts || !a.expert_offsets || !a.expert_cursor || !a.sorted_slots || !a.active_sets)
        throw_harness_error("launch_fused_moe", "the grouped path needs the sort buffers");
      MOE_GPU_CHECK(hipMemsetAsync(a.expert_counts, 0, sizeof(std::int32_t) * std::size_t(sets), MOE_LAUNCH_STREAM));
      count_slots_kernel<<<dim3(unsigned((slots + 255) / 256 < 1024 ? (slots + 255) / 256 : 1024)), dim3(256), 0, MOE_LAUNCH_STREAM>>>(a);
      MOE_GPU_CHECK_LAUNCH("count_slots_kernel");
      scan_slots_kernel<<<dim3(1), dim3(kScanThreads), 0, MOE_LAUNCH_STREAM>>>(a, sets);
      MOE_GPU_CHECK_LAUNCH("scan_slots_kernel");
      scatter_slots_kernel<<<dim3(unsigned((slots + 255) / 256 < 1024 ? (slots + 255) / 256 : 1024)), dim3(256), 0, MOE_LAUNCH_STREAM>>>(a);
      MOE_GPU_CHECK_LAUNCH("scatter_slots_kernel");
      if (mma) launch_grouped_mma(a, 1, max_inter, sets, active_grid);
      else if (dmma) launch_decode_mma(a, 1, max_inter, sets, active_grid);
      else launch_grouped<1>(a, plan.tokens_per_pass, dim3(unsigned((max_inter + kGroups - 1) / kGroups), active_grid), max_inter, sets);
    } else {
      dispatch_format(a.routed.wfmt, [&](auto f) {
        stage1_kernel<decltype(f)::value><<<dim3(unsigned(slots), unsigned((max_inter + kRows - 1) / kRows)), dim3(kThreads), 0, MOE_LAUNCH_STREAM>>>(a, max_inter);
      });
      MOE_GPU_CHECK_LAUNCH("stage1_kernel");
    }
    // The intermediate, already rounded to its dtype, quantized per slot row as each set declares.
    if (quant && !MOE_MUT(intermediate_requant_skipped)) {
      quantize(a.mid, slots, a.routed.inter, max_inter, a.routed.aq, per, false, "quantize_rows_kernel (intermediate, routed)");
      if (a.n_shared > 0)
        quantize(a.mid, slots, a.shared.inter, max_inter, a.shared.aq, per, true, "quantize_rows_kernel (intermediate, shared)");
    }
    if (grouped) {
      if (mma) launch_grouped_mma(a, 2, max_inter, sets, active_grid);
      else if (dmma) launch_decode_mma(a, 2, max_inter, sets, active_grid);
      else launch_grouped<2>(a, plan.tokens_per_pass, dim3(unsigned((a.hidden + kGroups - 1) / kGroups), active_grid), max_inter, sets);
    } else {
      dispatch_format(a.routed.wfmt, [&](auto f) {
        stage2_kernel<decltype(f)::value><<<dim3(unsigned(slots), unsigned((a.hidden + kRows - 1) / kRows)), dim3(kThreads), 0, MOE_LAUNCH_STREAM>>>(a, max_inter);
      });
      MOE_GPU_CHECK_LAUNCH("stage2_kernel");
    }
  }
  if (a.reduce != ReduceMode::per_k) {
    finalize_kernel<<<dim3(1024), dim3(256), 0, MOE_LAUNCH_STREAM>>>(a);
    MOE_GPU_CHECK_LAUNCH("finalize_kernel");
  }
}

}  // namespace moe::gpu
