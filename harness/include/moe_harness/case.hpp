// One case against one kernel, step by step or whole: the device, gating, the fixture, the references, the verdict
// on an output, and the full pipeline with its structural probes (docs/architecture.md "Data flow of one case").
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "moe_harness/types.hpp"

namespace moe::api {

// The live device as this process sees it (no runtime or no GPU: device empty and a message saying why).
DeviceDetection detect_device();

// A kernel of this build by id: host-contract (short: host), gpu-fused-moe (gpu) in GPU builds, KERNEL~MUTANT for a
// mutant of the catalog; host_budget (FLOP, 0: the default) is where the host kernel declines a case.
std::unique_ptr<KernelUnderTest> make_kernel(const std::string& id, double host_budget = 0);
// The kernels `ids` name (as make_kernel), or every kernel of this build when `ids` is empty.
std::vector<std::unique_ptr<KernelUnderTest>> make_kernels(const std::vector<std::string>& ids = {}, double host_budget = 0);

// Whether (case, kernel) runs here: run, skip (with the reason) or fail (a device that cannot be identified, or a
// missing one when `required`); the rules of docs/reliability.md "Gating".
GateDecision gate(const CaseSpec& c, const KernelUnderTest& kernel, const DeviceDetection& device,
                  const DeviceRequirement& required = {});

// The case's pristine checkpoint (the exact tier's dyadic one for exact cases) and its fingerprint; `seed` replaces
// the case's seed; `weights` shares expert weights between cases with the same weights key.
Fixture make_fixture(const CaseSpec& c, std::optional<std::uint64_t> seed = {}, WeightCache* weights = nullptr);

// The reference routing and the contract and ideal references of the fixture; from `cache` when it holds them
// (keyed by case, reference version, case hash, effective rounding contract and fingerprint), else computed (and
// stored there when given). `declared`: the rounding points the kernel fixes (parse_rounding_contract(), e.g.
// "gate_up=bf16,slot=bf16"); the references follow the case's contract overridden by it unless the case pins its
// contract (docs/judging.md "The rounding contract"), and carry that contract (ReferenceSet::rounding) into judge().
ReferenceSet compute_references(const CaseSpec& c, const Fixture& f, ReferenceCache* cache = nullptr,
                                const RoundingContract& declared = {});

// The output buffer a kernel of `run` receives: [tokens, hidden] in the problem's output dtype, every element the
// NaN sentinel (docs/judging.md "unwritten"), so an element the kernel never writes fails the verdict.
Tensor new_output(const ProblemSpec& p);

// What the case is judged by: its scheme's default thresholds with the case's override applied.
Thresholds thresholds(const CaseSpec& c);

// The verdict on a kernel's output [tokens, hidden] in the case's output dtype, against refs (computed under the
// contract the kernel declared to compute_references(), which the record names): the record `run` writes for it
// (status, failed_check, reason, every metric with the thresholds, the systematic statistics, per-token cos and rel,
// details), without the probes (they need a kernel to run again). A wrong shape or dtype is bad input; a non-finite reference an error.
CaseRecord judge(const CaseSpec& c, const Fixture& f, const ReferenceSet& refs, const Tensor& out,
                 const std::string& kernel_id = "external");
// The same for raw host memory: `nbytes` bytes of `dtype` holding [tokens, hidden] row-major (copied once).
CaseRecord judge(const CaseSpec& c, const Fixture& f, const ReferenceSet& refs, const void* data, std::size_t nbytes,
                 DType dtype, const std::string& kernel_id = "external");

// The whole pipeline on `kernel`: gate, fixture, references, prepare on a clone, run into the NaN sentinel, the
// pristine check, the verdict, then the probes (rerun into the inverse sentinel, linearity). The kernel's
// rounding_contract() is its declaration, or options.declared_contract when set. Never throws for the case: a
// harness error is status error.
CaseRecord run_case(const CaseSpec& c, KernelUnderTest& kernel, const DeviceDetection& device,
                    const PipelineOptions& options = {});

}  // namespace moe::api
