#include "harness/pipeline/rounding_resolution.hpp"

#include <fmt/format.h>

#include "fixtures/error.hpp"

namespace moe {

ResolvedContract case_contract(const ProblemSpec& p, bool pinned) {
  const std::string text = contract_text(p);
  return {p, {text, pinned ? "pinned" : text == "default" ? "default" : "case", "default", ""}};
}

ResolvedContract resolve_contract(const CaseSpec& c, const ProblemSpec& p, const RoundingContract& declared) {
  // A shared point where the case has no shared expert combines nothing: not a point of this case.
  RoundingContract d = declared;
  if (p.n_shared == 0) d.shared.reset();
  const RoundingContract changes = differing(d, contract_of(p));
  RoundingContract applied = changes, refused;
  if (c.pin_rounding) {
    refused = changes;
    applied = {};
  } else if (changes.output) {
    refused.output = changes.output;
    applied.output.reset();
  }
  ResolvedContract r = case_contract(with_contract(p, applied), c.pin_rounding);
  if (!c.pin_rounding && !applied.empty()) r.record.source = "kernel";
  r.record.declared = to_text(declared);
  r.record.not_applied = refused.empty() ? "" : to_text(refused);
  return r;
}

bool floor_declared(const ContractRecord& r) {
  return r.source == "kernel" && r.declared.find("_floor=") != std::string::npos &&
         r.not_applied.find("_floor=") == std::string::npos;
}

void refuse_zeroing_floor(const ResolvedContract& rc, const std::string& where, const std::string& declared_where,
                          const std::string& declared_key) {
  const std::optional<SpecProblem> z = floor_zeroes_every_input(rc.problem);
  if (!z) return;
  if (!floor_declared(rc.record)) throw CaseInputError(where, z->key, z->problem, z->fix);
  throw CaseInputError(declared_where, declared_key,
                       z->problem + " (the floor is the declared contract's: " + rc.record.declared + ")",
                       fmt::format("in {} declare a token_floor / group_floor well below the case's largest |x|, "
                                   "{:g} (vLLM's per-token quantizer uses 0.001953125), or none: the case's own floor "
                                   "then applies", declared_key, input_peak(rc.problem)));
}

std::string contract_line(const ContractRecord& r) {
  std::string s = "  rounding contract: " + r.effective + " (" + r.source;
  if (r.declared != "default") s += "; the kernel declared " + r.declared;
  if (!r.not_applied.empty())
    s += "; not applied: " + r.not_applied +
         (r.source == "pinned" ? " (the case pins its contract)" : " (the output dtype is the case's)");
  return s + ")\n";
}

}  // namespace moe
