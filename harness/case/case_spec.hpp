// The case: a ProblemSpec plus what the harness needs to run and judge it (targets, tolerance overrides, tags, the
// kernels it applies to) and where it came from. Its canonical id is a stable, readable string used for filtering,
// caching and drift, e.g. "qwen3.5-35b-a3b/tp4/fp8ch.tok/silu/T3/decode/atomic".
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fixtures/problem.hpp"
#include "verdict/tolerance.hpp"  // Tier, ToleranceOverride

namespace moe {

struct Targets {
  std::vector<std::string> archs;  // normalized ("gfx942", "sm_90", "host"); empty: any
  std::vector<int> compute_units;  // CU / SM counts; empty: any
};

struct CaseSpec {
  std::string id;
  std::string model = "custom";
  std::string variant;            // optional suffix that keeps ids unique when only untracked fields differ
  ProblemSpec problem;
  Tier tier = Tier::statistical;
  Targets targets;
  ToleranceOverride tolerance;
  std::vector<std::string> tags;
  std::vector<std::string> kernels;  // empty: every kernel
  // The case's rounding contract is the one every kernel is judged against, whatever a kernel declares
  // (`pin_rounding_contract: true`; docs/judging.md "The rounding contract").
  bool pin_rounding = false;
  std::optional<double> timeout_s;   // the watchdog's limit for this case (harness/isolation/case_limits.hpp)
  // A step of a call sequence (a suite with `sequence:`, docs/judging.md "Call sequences"): its position in the run
  // order (its id is "s<index>/<canonical id>"), the sequence's step count, order and seed. Absent: a plain case.
  struct SequenceStep {
    std::size_t index = 0, count = 0;
    std::string order;  // "scripted" | "shuffled"
    std::uint64_t seed = 0;
  };
  std::optional<SequenceStep> step;
  std::string source;                // "file:line"
};

std::string canonical_id(const CaseSpec& c);
std::string quant_short_name(const QuantScheme& q);
bool is_decode(const ProblemSpec& p);  // token counts a decode step produces (<= 64)

}  // namespace moe
