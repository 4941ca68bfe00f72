#include "kernels/mutants/host_mutant_hooks.hpp"

#include <algorithm>
#include <string>

#include "fixtures/error.hpp"
#include "kernels/mutants/mutation.hpp"

namespace moe {
namespace {

struct Bf16Accumulation : HostKernelHooks {
  bool accumulate_in_bf16() const override { return true; }
};

// One E8M0 block scale (the first 32 columns of row 0 of w13) of the first local expert the routing hits read one
// exponent high.
struct E8m0ScaleOffByOne : HostKernelHooks {
  std::int64_t expert = -1;
  void begin_run(const ProblemSpec& p, const Checkpoint&, const RoutingResult& r) override {
    expert = first_hit_local_expert(p, r);
  }
  const std::uint8_t* e8m0_row_scales(const std::uint8_t* stored, std::int64_t n, bool is13, std::int64_t e,
                                      std::int64_t row, std::uint8_t* scratch) const override {
    if (!is13 || e != expert || row != 0 || n == 0) return stored;
    std::copy(stored, stored + n, scratch);
    scratch[0] = std::uint8_t(scratch[0] + 1);
    return scratch;
  }
};

struct Fp4NibblesSwapped : HostKernelHooks {
  int e2m1_even_nibble() const override { return 1; }
};

// Every token's routed stage-1 input quantized with the one per-tensor scale of the whole batch.
struct PerTensorActScale : HostKernelHooks {
  float scale = 0.0f;
  void begin_run(const ProblemSpec& p, const Checkpoint& c, const RoutingResult&) override {
    scale = per_tensor_act_scale(p, c);
  }
  float forced_token_scale() const override { return scale; }
};

struct SwigluClampDropped : HostKernelHooks {
  void activation(GateParams& ap, bool, std::int64_t) const override { ap.clamp = false; }
};

// The most-used local expert's gate and up halves read the wrong way round (a per-expert reorder applied twice).
struct GateUpSwappedOneExpert : HostKernelHooks {
  std::int64_t expert = -1;
  void begin_run(const ProblemSpec& p, const Checkpoint&, const RoutingResult& r) override {
    expert = most_used_local_expert(p, r);
  }
  void activation(GateParams& ap, bool shared, std::int64_t e) const override {
    if (shared || e != expert || ap.layout == GateUpLayout::interleaved) return;
    ap.layout = ap.layout == GateUpLayout::gate_up ? GateUpLayout::up_gate : GateUpLayout::gate_up;
  }
};

// The stage-1 intermediate rounded toward zero instead of to nearest even (a conversion with the wrong rounding mode).
struct IntermediateTowardZero : HostKernelHooks {
  float intermediate_rounded(float v, IntermediateDtype d, float) const override {
    return rounded_toward_zero(v, d == IntermediateDtype::bf16 ? DType::bf16 : d == IntermediateDtype::f16 ? DType::f16 : DType::f32);
  }
};

struct IntermediateRequantSkipped : HostKernelHooks {
  bool quantize_intermediate() const override { return false; }
};

// A non-atomic fused reduce: token 0's second routed update is overwritten by a concurrent one.
struct LostAtomicUpdate : HostKernelHooks {
  bool slot_summed(std::int64_t tok, std::int64_t j) const override { return !(tok == 0 && j == 1); }
};

// A kernel whose token sum takes a bf16 accumulator at odd positions (a tail tile's narrower path): within every
// tolerance and unbiased, but a token's bits depend on where in the batch it sits.
struct TokenPositionDependent : HostKernelHooks {
  IntermediateDtype token_reduce_dtype(std::int64_t tok, IntermediateDtype contract) const override {
    return tok % 2 ? IntermediateDtype::bf16 : contract;
  }
};

// A kernel whose experts with odd local labels round their slot outputs to bf16 (a special-cased path keyed by the
// expert's index): unbiased and within tolerance, but the output depends on how the experts are numbered.
struct ExpertLabelDependent : HostKernelHooks {
  IntermediateDtype expert_slot_dtype(std::int64_t expert, IntermediateDtype contract) const override {
    return expert % 2 ? IntermediateDtype::bf16 : contract;
  }
};

}  // namespace

std::unique_ptr<HostKernelHooks> host_mutant_hooks(Mutation m) {
  switch (m) {
    case Mutation::none: return std::make_unique<HostKernelHooks>();
    case Mutation::bf16_accumulation: return std::make_unique<Bf16Accumulation>();
    case Mutation::e8m0_scale_off_by_one: return std::make_unique<E8m0ScaleOffByOne>();
    case Mutation::fp4_nibbles_swapped: return std::make_unique<Fp4NibblesSwapped>();
    case Mutation::per_tensor_act_scale: return std::make_unique<PerTensorActScale>();
    case Mutation::swiglu_clamp_dropped: return std::make_unique<SwigluClampDropped>();
    case Mutation::lost_atomic_update: return std::make_unique<LostAtomicUpdate>();
    case Mutation::intermediate_requant_skipped: return std::make_unique<IntermediateRequantSkipped>();
    case Mutation::token_position_dependent: return std::make_unique<TokenPositionDependent>();
    case Mutation::expert_label_dependent: return std::make_unique<ExpertLabelDependent>();
    case Mutation::gate_up_swapped_one_expert: return std::make_unique<GateUpSwappedOneExpert>();
    case Mutation::intermediate_toward_zero: return std::make_unique<IntermediateTowardZero>();
    default: break;
  }
  throw_harness_error("host_mutant_hooks",
                      "mutant '" + std::string(mutation_name(m)) + "' is no in-kernel mutant of the host contract kernel",
                      "build it through make_kernel_by_id (an input/output mutant is a MutantKernel around the clean "
                      "kernel)");
}

}  // namespace moe
