#include "harness/isolation/case_limits.hpp"

#include <fmt/format.h>

namespace moe {
namespace {

constexpr double kBaseS = 60;
constexpr double kSecondsPerWeightElement = 1.5e-6;
constexpr double kSecondsPerFlop = 2e-9;           // the CPU references
constexpr double kSecondsPerHostKernelFlop = 1e-7;  // a kernel that computes on the host, four runs
constexpr double kBaseBytes = double(kWorkerBaseMemoryBytes);
constexpr double kBytesPerWeightElement = 24;
constexpr double kBytesPerActivation = 64;

// Per token: the input and output rows and the slots' intermediates.
double activations(const ProblemSpec& p) {
  return double(p.tokens) * (2.0 * double(p.hidden) + double(p.topk) * (2.0 * double(p.local_inter()) + double(p.hidden)) +
                             double(p.n_shared) * 2.0 * double(p.local_shared_inter()));
}

}  // namespace

double case_weight_elements(const ProblemSpec& p) {
  return 3.0 * double(p.hidden) *
         (double(p.local_experts()) * double(p.local_inter()) + double(p.n_shared) * double(p.local_shared_inter()));
}

double case_flops(const ProblemSpec& p) {
  return 2.0 * double(p.tokens) * 3.0 * double(p.hidden) *
         (double(p.topk) * double(p.local_inter()) + double(p.n_shared) * double(p.local_shared_inter()));
}

double default_case_timeout_s(const ProblemSpec& p, bool host_kernel) {
  const double per_flop = kSecondsPerFlop + (host_kernel ? kSecondsPerHostKernelFlop : 0.0);
  return kBaseS + case_weight_elements(p) * kSecondsPerWeightElement + case_flops(p) * per_flop;
}

CaseLimit case_time_limit(const CaseSpec& c, bool host_kernel, std::optional<double> command_line_s) {
  if (command_line_s) return {*command_line_s, "--case-timeout"};
  if (c.timeout_s) return {*c.timeout_s, fmt::format("timeout_s in {}", c.source)};
  const ProblemSpec& p = c.problem;
  const double per_flop = kSecondsPerFlop + (host_kernel ? kSecondsPerHostKernelFlop : 0.0);
  return {default_case_timeout_s(p, host_kernel),
          fmt::format("the default for its work: {:.0f} s + {:.3g} weight elements x {:.1e} s + {:.3g} FLOP x {:.1e} s{}; "
                      "set timeout_s in the case or --case-timeout to change it",
                      kBaseS, case_weight_elements(p), kSecondsPerWeightElement, case_flops(p), per_flop,
                      host_kernel ? " (a kernel on the host)" : "")};
}

MemoryLimit case_memory_limit(const CaseSpec& c, std::size_t cached_weight_bytes) {
  const ProblemSpec& p = c.problem;
  const double bytes = kBaseBytes + kBytesPerWeightElement * case_weight_elements(p) +
                       kBytesPerActivation * activations(p) + double(cached_weight_bytes);
  return {std::size_t(bytes),
          fmt::format("{:.1f} GiB + {:.0f} B x {:.3g} weight elements + {:.0f} B x {:.3g} activations + {:.2f} GiB of "
                      "cached weights",
                      kBaseBytes / double(1 << 30), kBytesPerWeightElement, case_weight_elements(p),
                      kBytesPerActivation, activations(p), double(cached_weight_bytes) / double(1 << 30))};
}

}  // namespace moe
