#include "harness/pipeline/rounding_resolution.hpp"

namespace moe {
namespace {

// The points of `d` whose value differs from `base`'s.
RoundingContract differing(const RoundingContract& d, const RoundingContract& base) {
  RoundingContract r;
  if (d.gate_up && d.gate_up != base.gate_up) r.gate_up = d.gate_up;
  if (d.act && d.act != base.act) r.act = d.act;
  if (d.slot && d.slot != base.slot) r.slot = d.slot;
  if (d.reduce && d.reduce != base.reduce) r.reduce = d.reduce;
  if (d.shared && d.shared != base.shared) r.shared = d.shared;
  if (d.output && d.output != base.output) r.output = d.output;
  if (d.token_floor && d.token_floor != base.token_floor) r.token_floor = d.token_floor;
  if (d.group_floor && d.group_floor != base.group_floor) r.group_floor = d.group_floor;
  if (d.token_scale && d.token_scale != base.token_scale) r.token_scale = d.token_scale;
  if (d.group_scale && d.group_scale != base.group_scale) r.group_scale = d.group_scale;
  if (d.weight && d.weight != base.weight) r.weight = d.weight;
  return r;
}

}  // namespace

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

std::string contract_line(const ContractRecord& r) {
  std::string s = "  rounding contract: " + r.effective + " (" + r.source;
  if (r.declared != "default") s += "; the kernel declared " + r.declared;
  if (!r.not_applied.empty())
    s += "; not applied: " + r.not_applied +
         (r.source == "pinned" ? " (the case pins its contract)" : " (the output dtype is the case's)");
  return s + ")\n";
}

}  // namespace moe
