// One (case, kernel) from fixture to verdict (docs/architecture.md "The data flow of one case"):
//   gate -> generate the pristine checkpoint (fingerprinted) -> route -> contract + ideal references from the
//   pristine tensors, under the rounding contract the case and the kernel's declaration give
//   (harness/pipeline/rounding_resolution.hpp; the kernel is handed that contract's problem) -> kernel.prepare() on a CLONE -> kernel.run() into a NaN-sentinel-filled output ->
//   pristine fingerprint unchanged? (else a harness error: "reference inputs were mutated") -> judge -> structural
//   probes on a pass (harness/pipeline/probes.hpp): rerun into the inverse sentinel; linearity (router weights doubled).
//   The record's probes say which of them ran and why the others did not.
// Never throws for a case: harness errors become status "error" (exit 3 for the run); out of device memory is a
// failed case (failed_check out_of_memory), a host allocation failure an error with that check.
#pragma once
#include <map>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "harness/case/case_spec.hpp"
#include "harness/run/gating.hpp"
#include "verdict/judge.hpp"
#include "reference/moe/band_explanation.hpp"
#include "harness/pipeline/reference_cache.hpp"
#include "harness/tuning/table_set.hpp"
#include "harness/pipeline/weight_cache.hpp"
#include "kernels/kernel_under_test.hpp"
#include "reports/run_report.hpp"

namespace moe {

struct PipelineOptions {
  DeviceRequirement device_requirement;
  std::optional<std::uint64_t> seed;  // overrides every case's seed
  WeightCache* weights = nullptr;     // shared across a run's cases; nullptr: generate per case
  ReferenceCache* references = nullptr;  // on-disk references kept across runs; nullptr: compute every time
  bool rerun_probe = true;            // second run into the inverse sentinel (bit-identical if deterministic)
  bool linearity_probe = true;        // exact router-weight probes on deterministic kernels (harness/pipeline/probes.hpp)
  bool token_probes = true;           // padding rows, red zones, permuted tokens, relabeled experts (token_probes.hpp)
  // Replaces the kernel's rounding_contract() declaration (a client that declares for a kernel it wraps); the
  // case's rules still apply (harness/pipeline/rounding_resolution.hpp).
  std::optional<RoundingContract> declared_contract;
  // Test hook for the harness's own self-checks: called with the pristine checkpoint after the kernel ran, to
  // emulate a bug that wrote into tensors the reference reads (must surface as a harness error, never a pass).
  std::function<void(Checkpoint& pristine)> after_kernel_hook;
  // `run --dispatch-table`: each case dispatches from its row (harness/tuning/tuner.hpp apply_dispatch_table).
  const TableSet* dispatch_table = nullptr;
  // A call sequence's step (docs/judging.md "Call sequences"): the output is filled with these bytes (the previous
  // step's output, repeated cyclically to the new size) instead of the NaN sentinel, and they are replaced by this
  // step's output once the kernel ran. Empty: the first step, the sentinel as for a plain case.
  std::vector<std::byte>* dirty_output = nullptr;
  // Selftest: receives the contract reference and the kernel's output (decoded to float) of a judged case.
  std::function<void(const std::vector<float>& ref, const std::vector<float>& out)> capture;
  // Simulate the envelope for every judged output, not only one that fails at the case's own thresholds: the
  // record then shows each metric against its envelope (envelope_* metrics, the statistics' z scales). The verdict
  // is the same either way (with_envelope never tightens a threshold).
  bool envelope_always = false;
};

// `out`'s bytes from `previous` repeated cyclically (a call sequence's dirty output; nothing when it is empty).
void fill_dirty(Tensor& out, const std::vector<std::byte>& previous);
// The case's problem with `seed` (when given) replacing its own.
ProblemSpec case_problem(const CaseSpec& c, std::optional<std::uint64_t> seed);
// The pristine checkpoint of c on problem p: the exact tier's dyadic fixture, else the generated one (its expert
// weights from `weights` when given, shared by the cases of a run).
Checkpoint pristine_checkpoint(const CaseSpec& c, const ProblemSpec& p, WeightCache* weights,
                               KnownSeals* known = nullptr);
// The verdict on `out` [T, H] against the references of p under th (verdict/judge.hpp). weights: the pristine
// checkpoint the references came from, for the requantization band's explanation test
// (reference/moe/band_explain.hpp); nullptr (an exported reference) leaves the band's rule alone. memo: the
// explanation of each token already tested on this output (the envelope's decision and the verdict judge the same
// output; a token's explanation depends on the output, not on the thresholds), filled and reused when given.
using BandMemo = std::map<std::int64_t, BandExplanation>;
Judgement judge_output(const ProblemSpec& p, const ReferenceSet& refs, const Tensor& out, const Thresholds& th,
                       const Checkpoint* weights = nullptr, BandMemo* memo = nullptr);
// A verdict's fields of the record: status, failed check, reason, the systematic statistics of `out` against the
// references (statistical tier), details, metrics (with the thresholds), per-token cos and rel. weights: as
// judge_output's; where a GEMM of p accumulates with fewer bits than fp32 (a declared accum=mmaN on an 8-bit GEMM),
// expert_partial and token_gain explain their largest components by the slots' requantization steps with them
// (SystematicInput::steps); nullptr explains nothing.
void record_verdict(CaseRecord& rec, const ProblemSpec& p, const ReferenceSet& refs, const Tensor& out,
                    const Judgement& j, const Thresholds& th, const Checkpoint* weights = nullptr);
// Whether the verdict on `out` needs the envelope simulated: refs hold none, the tier is statistical, and `out`
// fails at the case's own thresholds th. An envelope only widens thresholds (verdict/envelope.hpp), so an output
// that passes at th passes with any envelope: the pipeline simulates it only where it can change the verdict.
// weights and memo as judge_output's. judged, when given, receives the verdict at th whenever one was computed: where
// no envelope is needed it is the record's verdict, which verdict_and_probes then takes instead of judging again.
bool needs_envelope(const ProblemSpec& p, const ReferenceSet& refs, const Tensor& out, const Thresholds& th,
                    const Checkpoint* weights = nullptr, BandMemo* memo = nullptr,
                    std::optional<CaseRecord>* judged = nullptr);

// The record of (spec, kernel) before it runs: id, kernel, source; false with the gate's skip or fail in it when
// the gate does not let the case run here.
bool start_record(CaseRecord& rec, const CaseSpec& spec, const KernelUnderTest& kernel, const DeviceDetection& device,
                  const DeviceRequirement& required);
// The last steps of a case once `kernel` wrote `out` from `working`: the verdict against refs, then the probes
// (the kernel's input checks first), into rec with their timing (judge, probes).
// `working` is lent to the token probes, which relabel its routed experts in place and restore them; `pristine`
// (may be nullptr) and `memo` to judge_output. judged: the verdict needs_envelope already computed on these refs at
// the case's thresholds (taken, not recomputed); nullptr judges here.
void verdict_and_probes(CaseRecord& rec, const CaseSpec& spec, const ProblemSpec& p, KernelUnderTest& kernel,
                        Checkpoint& working, const ReferenceSet& refs, const Tensor& out, const RunInfo& info,
                        const PipelineOptions& opt, const Checkpoint* pristine = nullptr, BandMemo* memo = nullptr,
                        CaseRecord* judged = nullptr);
// Inside a catch block: the exception in flight as the case's record (a verdict raised as an error, such as out of
// device memory, is a failure; anything else an error), never rethrown.
void record_exception(CaseRecord& rec);

CaseRecord execute_case(const CaseSpec& c, KernelUnderTest& kernel, const DeviceDetection& device,
                        const PipelineOptions& opt);

}  // namespace moe
