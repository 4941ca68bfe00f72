// The rounding contract a (case, kernel) is judged against (docs/judging.md "The rounding contract"): the case's
// points, overridden by the points the kernel declares, unless the case pins its contract. The output dtype is
// always the case's: it is the dtype of the tensor the kernel writes.
#pragma once
#include <string>

#include "fixtures/rounding_contract.hpp"
#include "harness/case/case_spec.hpp"
#include "reports/run_report.hpp"

namespace moe {

struct ResolvedContract {
  ProblemSpec problem;  // the case's problem (seed applied) with the effective contract's points
  ContractRecord record;  // what the report says: effective text, source, declaration, points not applied
};

// The effective contract of case `c` (problem `p`, its seed applied) for a kernel that declares `declared`.
ResolvedContract resolve_contract(const CaseSpec& c, const ProblemSpec& p, const RoundingContract& declared);
// `p`'s own contract, as a case that names no kernel is judged: source default or case (pinned when `pinned`).
ResolvedContract case_contract(const ProblemSpec& p, bool pinned = false);
// Bad input (CaseInputError, exit 2) when the effective contract's activation amax floor makes every input element
// of the case round to 0 in fp8 whatever the seed (floor_zeroes_every_input, fixtures/problem.hpp): the contract
// reference would be all zeros. The key is the case's floor (`quant.amax_floor`) where `where` is the case, or
// `declared_key` at `declared_where` when the floor came from the kernel's declared contract (`rounding_contract`,
// `--contract`). Called before any fixture is generated.
void refuse_zeroing_floor(const ResolvedContract& rc, const std::string& where, const std::string& declared_where,
                          const std::string& declared_key);
// Whether the effective contract's floors came from the kernel's declaration (not the case's own keys).
bool floor_declared(const ContractRecord& r);
// The diagnostics line: "  rounding contract: gate_up=bf16 (kernel; declared gate_up=bf16)".
std::string contract_line(const ContractRecord& r);

}  // namespace moe
