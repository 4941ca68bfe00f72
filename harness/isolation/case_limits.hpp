// The watchdog's limits for one case (isolated runs; docs/reliability.md "Fault containment").
//
// Time: `--case-timeout S` on the command line, else the case's `timeout_s`, else a default derived from the case's
// work, a constant plus generous multiples of what the slowest processes involved need on a small machine, so that a
// correct kernel never trips it:
//   default = 60 s + 1.5 us x weight elements + (2 ns + (kernel runs on the host ? 100 ns : 0)) x FLOPs
// weight elements: every stored expert element of the rank (the fixture generator writes them all, the reference
// dequantizes them); FLOPs: the MoE GEMMs of the tokens (the CPU references run them; a kernel on the host, the host
// contract kernel or a plugin, runs them four times: the verdict run and three probes). Measured on a 2-core VM
// shared with other builds (results/runs/2026-12-01-cpu-isolation/RUN.md): generation and references at most
// 0.15 us per weight element and 0.15 ns per FLOP, the host kernel's four runs at most 22 ns per FLOP; over the
// nightly suite on the host kernel every case finished in a tenth of its default limit or less.
//
// Memory: the worker's resident set may not pass
//   4 GiB + 24 B x weight elements + 64 B x activations + the generated weights its weight cache holds already
// (activations: per token the input and output rows and every slot's intermediate), which covers the pristine
// checkpoint, the weight cache's copy, the kernel's working clone, the references and the kernel's own buffers
// several times over (measured peaks in the same run log).
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "harness/case/case_spec.hpp"

namespace moe {

// The longest time limit a case may be given (`timeout_s`, `--case-timeout`): 1e6 s, eleven and a half days; a
// longer one is a typo, and the watchdog's deadline must stay representable.
inline constexpr double kMaxCaseTimeoutS = 1e6;

// The constant part of every case's memory limit (below): the least a worker may use while judging a case.
inline constexpr std::size_t kWorkerBaseMemoryBytes = std::size_t(4) << 30;

struct CaseLimit {
  double seconds = 0;
  std::string why;  // where the limit comes from, for the timeout record
};
struct MemoryLimit {
  std::size_t bytes = 0;
  std::string why;
};

double case_weight_elements(const ProblemSpec& p);
double case_flops(const ProblemSpec& p);
// host_kernel: the kernel computes on the CPU (KernelUnderTest::needs_device() is false).
double default_case_timeout_s(const ProblemSpec& p, bool host_kernel);
CaseLimit case_time_limit(const CaseSpec& c, bool host_kernel, std::optional<double> command_line_s);
MemoryLimit case_memory_limit(const CaseSpec& c, std::size_t cached_weight_bytes);

}  // namespace moe
