// Launch interface of the fused MoE kernels (kernels/moe/fused_moe.hip), in plain types so the host-side adapter
// compiles without a GPU header. Every offset into a buffer that can pass 2^31 elements is 64-bit.
// Weights: bf16/fp16, or fp8 e4m3 (fn or fnuz, decoded in software on every GPU) with per-tensor, per-channel or
// 128x128 block fp32 scales, or MX (e4m3 fn or packed e2m1 elements with E8M0 scales per 32 along K). Activations
// and the stage-1 intermediate are quantized and dequantized exactly as the case declares (per-token or 1x128 fp8,
// MXFP8) before each GEMM; the products decode(code) * scale are formed in fp32 as the contract defines.
#pragma once
#include <cstdint>

#include "fixtures/problem_enums.hpp"
#include "formats/dtype.hpp"
#include "formats/format_tags.hpp"
#include "formats/weight_format.hpp"
#include "kernels/mutants/gpu_mutant_launch.hpp"

// The case's own enums (Activation, GateUpLayout, ReduceMode, WeightFormat, ActFormat, MxScaleMode) and DType for
// the input, intermediate and output types (bf16, f16, f32): no mirror of them here.
namespace moe::gpu {

// How activations entering a GEMM are quantized (then dequantized): s = max(amax, amax_floor) / qmax per token or
// per 1x128 group (rounded up to a power of two when scale_pow2), q = rne(clamp(x / s, +-qmax)) in e4m3; or MXFP8
// with the case's shared-exponent mode.
struct ActQuant {
  ActFormat kind = ActFormat::none;
  bool fnuz = false;
  float qmax = 448.0f;
  float amax_floor = 1e-10f;
  bool scale_pow2 = false;
  MxScaleMode mx_mode = MxScaleMode::rceil;
  bool e8m0_triton = false;  // E8M0 0x00 = 0 and 0xFF = +Inf (else OCP: 2^-127 and NaN)
};

// One expert set (routed or shared): [count, 2*inter, hidden] and [count, hidden, inter] in `wfmt`, with the
// checkpoint's scale tensors (fixtures/checkpoint.hpp layouts) and its own activation quantization.
struct ExpertSet {
  const void* w13 = nullptr;
  const void* w2 = nullptr;
  const float* b13 = nullptr;  // [count, 2*inter] or null
  const float* b2 = nullptr;   // [count, hidden] or null
  std::int64_t inter = 0;
  bool clamp = true;           // SwiGLU-OAI limit applied
  WeightFormat wfmt = WeightFormat::bf16;
  bool fnuz = false;           // fp8 weight codes are e4m3fnuz
  bool e8m0_triton = false;    // MX weight scales decoded with the Triton edges
  const void* s13 = nullptr;   // fp32 scales (fp8) or E8M0 codes (MX)
  const void* s2 = nullptr;
  ActQuant aq;
};

struct FusedMoeArgs {
  std::int64_t tokens = 0, hidden = 0;
  int topk = 0, n_shared = 0;
  std::int64_t first_local_expert = 0, local_experts = 0;
  DType in_type = DType::bf16, mid_type = DType::bf16, out_type = DType::bf16;
  Activation act = Activation::silu;
  GateUpLayout layout = GateUpLayout::gate_up;
  float alpha = 1.702f, limit = 7.0f;
  bool weight_on_input = false;
  ExpertSet routed, shared;
  const void* x = nullptr;               // [T, H] in_type
  const std::int32_t* topk_ids = nullptr;  // [T, k] global ids
  const float* topk_weights = nullptr;     // [T, k]
  // Work buffers owned by the caller:
  float* xq_routed = nullptr;  // quantized activations: [T, H], or [T * (k + n_shared), H] with the weight on input
  float* xq_shared = nullptr;  // [T, H]; both null when no set quantizes its activations
  float* mid = nullptr;     // [T * (k + n_shared), max inter] stage-1 output (two-stage path)
  float* slots = nullptr;   // [T * (k + n_shared), H] per-slot results (separate / per_k)
  float* acc = nullptr;     // [T, H] fp32 accumulation (fused_atomic)
  void* out = nullptr;      // [T, H] out_type
  // Grouped paths (StagePath::grouped*): slots sorted by expert set (routed local experts, then shared experts).
  std::int32_t* expert_counts = nullptr;   // [local_experts + n_shared]
  std::int32_t* expert_offsets = nullptr;  // [local_experts + n_shared + 1]
  std::int32_t* expert_cursor = nullptr;   // [local_experts + n_shared]
  std::int32_t* sorted_slots = nullptr;    // [T * (k + n_shared)]
  std::int32_t* active_sets = nullptr;     // [local_experts + n_shared + 1]: the sets holding slots, their count last
  ReduceMode reduce = ReduceMode::fused_atomic;
  bool fail_launch_for_test = false;  // test hook: an invalid launch configuration, to prove errors are reported
};

inline bool quantizes_activations(const FusedMoeArgs& a) {
  return a.routed.aq.kind != ActFormat::none || (a.n_shared > 0 && a.shared.aq.kind != ActFormat::none);
}

// The elements of one weight row a lane of the grouped kernels reads in one 16-byte load (the format table's bits
// per element): 8 of 16 bits, 16 of fp8 or MXFP8, 32 of MXFP4. kChunkWidth<F> is the same for device code, which
// may read the table's scalars only through constants (F: a WeightFormat as int, the kernels' template parameter).
constexpr int chunk_width(WeightFormat f) { return 128 / weight_format_info(f).element_bits; }
template <int F> inline constexpr int kChunkWidth = chunk_width(WeightFormat(F));

// The weight formats the device decoders (weight_loads.hpp, mma_decode_ring.hpp) and the launchers' format
// dispatch implement: the format table's rows up to mxfp4. The adapter declines a case in any later row, a format
// the table has before its GPU decoder exists (docs/adding-a-weight-format.md).
constexpr bool has_device_decoder(WeightFormat f) { return int(f) <= int(WeightFormat::mxfp4); }

// The one-stage kernel holds a slot's intermediate in shared memory: inter up to this (24 KiB beside the 16 KiB
// reduction).
constexpr std::int64_t kOneStageMaxInter = 6144;

// Which kernels one launch runs. kernels/gpu/dispatch_plan.hpp holds every rule that picks them; the launcher
// executes what it is given.
enum class StagePath : int {
  one_stage,           // one block per slot, the intermediate in shared memory (asked for by the case)
  row_wise,            // two-stage, one block per (slot, row tile), each slot reading its expert's weights itself
  grouped,             // two-stage, slots sorted by expert set, each weight row read once per pass over 2 or 8 tokens
  grouped_mma,         // grouped, the 8-token passes of bf16/fp16 GEMMs on matrix instructions (mma_stages.hip)
  grouped_mma_decode,  // grouped, the 2-token passes of fp8 / MX weights on matrix instructions (mma_decode.hip)
};
// The expert sets a launch covers: every set (the routed local experts, then the shared experts), or, with the
// shared experts on a separate path, the routed ones alone and then the shared ones alone (launch_args in
// kernels/gpu/launch_args.hpp shapes its arguments).
enum class LaunchSets : int { routed_and_shared, routed, shared };

struct LaunchPlan {
  StagePath path = StagePath::row_wise;
  int tokens_per_pass = 0;  // the grouped paths: 2 or 8 (grouped_stages.hpp: kTokFew, kTokMany); 0 otherwise
  ReduceMode reduce = ReduceMode::fused_atomic;
  LaunchSets sets = LaunchSets::routed_and_shared;
  // Stage-1 inputs prepared in xq_routed / xq_shared first: activations quantized, or the decode mma operands.
  bool prepare_inputs = false;
};

// Enqueues one launch of the MoE, as `plan` says, on gpu::launch_stream() (the default stream unless a device probe
// set its own); checks the last error after every kernel
// (throws moe::Error), and refuses a plan its arguments cannot run (quantized activations on the one-stage path, a
// missing work buffer, matrix instructions in a build without them). per_k leaves the per-slot results in `slots`
// for the caller to sum in k order (kernels/common/output_sums.hpp) and does not write `out`.
void launch_fused_moe(const FusedMoeArgs& a, const LaunchPlan& plan);
// The same kernels compiled a second time with the mutant catalog in them (kernels/mutants/fused_moe_mutants.hip),
// carrying the bug `mutant` names; for `moe-harness selftest --kernel gpu` only. It has no matrix-instruction
// kernels (plan them with BuildCaps{}).
void launch_fused_moe_mutant(const FusedMoeArgs& a, const LaunchPlan& plan, const MutantLaunch& mutant);
// The bug the mutant build's kernels read, set now (a synchronous copy, skipped when it holds that bug already):
// launch_fused_moe_mutant() sets it itself; a caller that will launch on another stream sets it first.
void set_fused_moe_mutant(const MutantLaunch& mutant);

}  // namespace moe::gpu
