// The mutant catalog: each mutation is one realistic bug from the field, selectable by name, with its
// level: an input/output mutant (a change to what a kernel is given or returns) is applied by MutantKernel
// (mutant_kernel.hpp) around any kernel under test, host, GPU or plugin; an in-kernel mutant needs the kernel's
// inside: the host contract kernel's hook points (host_mutant_hooks.hpp), the GPU kernels' separate compilation of
// the same source (fused_moe_mutants.hip), so the default build's kernels carry none. The harness's selftest proves
// each is caught (docs/judging.md "Mutants").
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures/checkpoint.hpp"
#include "fixtures/problem.hpp"
#include "kernels/mutants/mutation_id.hpp"
#include "reference/routing/routing.hpp"
#include "reports/verdict.hpp"

namespace moe {

enum class MutantLevel { io, in_kernel };
MutantLevel mutant_level(Mutation m);
// Why the mutant has its level, in a line (the catalog's reasons, kernels/mutants/mutation.cpp).
std::string_view mutant_level_reason(Mutation m);

// The numerical bugs, in catalog order (the fault mutants are not among them).
std::vector<Mutation> all_mutations();
std::string_view mutation_name(Mutation m);
std::optional<Mutation> parse_mutation(std::string_view s);
std::string mutation_names();
// Whether the bug can change the output of problem p at all (the selftest then checks it really did).
bool mutation_applies(Mutation m, const ProblemSpec& p);
// Bugs too small for any statistical tolerance (one wrong block scale): the exact tier must catch them
// on every live case; on statistical cases a miss is reported, not failed. gpu: whether the GPU kernels carry it.
// bf16_accumulation is one of them on the GPU: its K reduction is a lane tree (row-wise kernels: 256 lanes, 8
// levels; grouped kernels: 16 lanes, 4 levels), so the bf16 rounding enters only over each lane's serial terms
// (K/256 or K/16) and the tree's levels, where the host kernel's serial loop over all of K errs ~2^-9 * sqrt(K):
// 16x (row-wise) or 4x (grouped) less. Measured on the H200 (2026-11-30, results/selftest/
// 2026-11-30-h200-gpu-20-seeds.txt): caught bit for bit on all 7 exact-tier cases, on 2 of the 7 statistical ones
// by the mismatch fraction, below tolerance on 5; the same 9 of 14 on the grouped kernels over 20 seeds
// (2026-11-30-h200-gpu-grouped-20-seeds.txt).
bool exact_tier_only(Mutation m, bool gpu);
// Why mutant m's effect on a statistical case of problem p lies inside what a correct kernel may legitimately do
// there (a miss is then reported with this reason, not failed), or "" where it must be caught.
// expert_gain_2pct on a quantized-activation scheme: a correct vLLM-style pipeline with its fp8 GEMMs on the
// H200's fp8 matrix units gives one slot's own gain of -0.7 % to -1.5 % (results/runs/2026-12-02-h200-panel), so
// the per-expert floor there is 3e-2 (verdict/thresholds.cpp) and a 2 % expert gain is within 1.5x of that.
// intermediate_toward_zero on a quantized-activation case of fewer than 16 tokens: the intermediate's requantization
// turns the shift into code flips whose signs disagree, and no output statistic reaches its z (mutation.cpp).
std::string_view inside_legitimate_envelope(Mutation m, const ProblemSpec& p);
// Bugs only a GPU kernel can have (the host contract kernel indexes with 64-bit size_t throughout; the faults are
// device faults).
bool gpu_only(Mutation m);
// Bugs written only into the host contract kernel's hook points (the GPU kernels' mutant build carries no such code).
bool host_only(Mutation m);
// The probe that is there to catch bug m, for the mutants that leave the judged output as it should be (or within
// tolerance) and show only under a token probe (harness/pipeline/token_probes.hpp): the selftest counts such a
// mutant live wherever it applies, and caught only by this check.
std::optional<Check> probe_check(Mutation m);
// Bugs live only across calls of different sizes on one kernel object (workspace_init_once): never within one case's
// runs (one size), so the selftest runs them through a call sequence (cases/selftest-sequence.yaml), not case by case.
bool sequence_only(Mutation m);
// A fault of a kernel under development (an illegal memory access, a kernel that never returns), for proving that
// the harness contains it (docs/reliability.md "Fault containment"): live only on a case of this seed, the run's other cases run
// the mutant build without a bug.
bool fault_mutant(Mutation m);
inline constexpr std::uint64_t kFaultMutantSeed = 0xfa17;

// What several mutants need to know, computed one way for the host and the GPU kernels:
// the first local expert the routing hits (e8m0_scale_off_by_one), -1 if none;
std::int64_t first_hit_local_expert(const ProblemSpec& p, const RoutingResult& r);
// the local expert the most routed slots go to (expert_gain_2pct, expert_partial_gain, gate_up_swapped_one_expert),
// -1 if none (the first of a tie);
std::int64_t most_used_local_expert(const ProblemSpec& p, const RoutingResult& r);
// v rounded toward zero to t (bf16, f16; f32 and NaN: v): output_truncated, intermediate_toward_zero;
float rounded_toward_zero(float v, DType t);
// the one per-tensor scale a per_tensor_act_scale kernel uses for every token's stage-1 input;
float per_tensor_act_scale(const ProblemSpec& p, const Checkpoint& c);
// what token tok's selected softmax probabilities sum to (routing_not_renormalized multiplies its weights by it);
float selected_probability_sum(const ProblemSpec& p, const Checkpoint& c, const RoutingResult& r, std::int64_t tok);
// the fnuz mutants: emulate a gfx942 kernel's prepare() converting an e4m3fn checkpoint in place, badly
// (nothing happens for other mutations or checkpoints).
void apply_fnuz_conversion_mutant(Mutation m, Checkpoint& working);

}  // namespace moe
