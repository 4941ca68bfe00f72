// Token probes (docs/judging.md "Token probes"): what a kernel does to tokens and buffers it was not asked about,
// checked with one extra run of the kernel per case after the structural probes (harness/pipeline/probes.hpp):
//   token_isolation    x sits in a larger allocation whose rows past T hold NaN, +Inf, -Inf and the largest finite
//                      value, as do the rows of tokens with no slot on this rank (and no shared expert here):
//                      every valid token's output must equal the judged run's bit for bit (on a kernel
//                      that declares itself non-deterministic: within 1e-2 of each row's norm, finite where it is);
//   red_zones          guard bytes before and after every per-token buffer handed to the kernel (x with its padding,
//                      the router logits and routing tensors, the output) must be intact after the call; a violation
//                      names buffer, side and offset (the expert weights are lent in place, without guards);
//   token_permutation  the tokens (with their routing) rotated by one position: the output rows rotate with them,
//                      bit for bit (every per-token step of the contract is per token);
//   expert_relabeling  two local experts exchange names (the most-used one and its neighbour label: their weights,
//                      scales and biases swapped in place, the ids renamed): the output is unchanged bit for bit.
// The one extra run carries all four; only when its valid rows differ do further runs (padding alone, then the
// rotation alone, then the relabeling alone) say which probe failed.
#pragma once
#include "harness/pipeline/probes.hpp"

namespace moe {

// `out` is the judged output on `routing`; `failed_first` the record's failed check so far (nothing runs after a
// failure). Permutation and relabeling need a deterministic kernel; isolation and the red zones run on any
// rerunnable kernel that reads the checkpoint it is handed.
// `working` is the case's working checkpoint: the probe run reads its expert weights in place (not copied, not
// guarded), relabeled by rotating them in place and restored before this returns, however it returns.
// The probe entry (CaseRecord::probes) whose failure is `check`: "token_isolation", "red_zones",
// "token_permutation", "expert_relabeling", and the device probes' "stream_order" and "graph_replay"
// (device_probes.hpp); nullptr for a check no such probe fails.
const char* token_probe_name(Check check);

ProbeOutcome run_token_probes(const ProblemSpec& p, KernelUnderTest& kernel, Checkpoint& working,
                              const RoutingResult& routing, const Tensor& out, Check failed_first, bool on);

}  // namespace moe
