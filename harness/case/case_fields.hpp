// The case schema, described once: every key of a case entry (docs/cases.md) as one row of a table, with how
// it is read and range-checked, where it lands in CaseSpec, what it adds to the canonical id and its name in
// case.json. The loader (read_case_fields()), canonical_id() and case_to_json_text() walk this table, so a key is
// added by adding its row (docs/adding-a-case-key.md). Checks that involve several keys stay in validate()
// (fixtures/problem.cpp), validate_exact_tier() and check_tolerance() (verdict/thresholds.cpp).
#pragma once
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "harness/case/case_spec.hpp"
#include "harness/case/case_yaml.hpp"

namespace moe {

// What an id fragment is compared with: the problem of the case's model preset, or the defaults for a custom shape.
struct IdBase {
  ProblemSpec preset;
  bool is_preset = false;
};

struct CaseField {
  std::string key;   // as written in a case; "routing.n_group" is n_group inside routing. Empty: a case.json entry only
  std::string json;  // its name in case.json ("shape.hidden": hidden inside shape); empty: not in case.json
  bool mapping = false;  // the rows of its keys ("routing.*") follow it in the table
  bool preset = false;   // a model preset sets it: a case naming a model takes it from the preset, not from defaults
  bool problem = false;  // it lands in ProblemSpec (it changes what is computed: the id must show it)
  std::int64_t lo = 0, hi = 0;  // an integer's accepted range, enforced when it is read
  // Reads the value the case gives (bad input naming the key at its line); a mapping checks its keys.
  void (*read)(const CaseField&, const Reader&, const CaseNode& value, CaseSpec&) = nullptr;
  // Runs after the key, and a mapping's keys, were read, whether the case gives it or not: a default that depends
  // on other keys, a check across a mapping's values.
  void (*after)(const Reader&, const CaseNode& whole_case, CaseSpec&) = nullptr;
  // Its fragment of the canonical id ("" while it holds the preset's or the default value), at id_order: the id is
  // the fragments of every row in ascending id_order.
  int id_order = 0;
  std::string (*id)(const CaseSpec&, const IdBase&) = nullptr;
  void (*to_json)(const CaseSpec&, nlohmann::ordered_json& slot) = nullptr;
};

// The rows in case.json's order, which is also the order the loader reads them in.
const std::vector<CaseField>& case_fields();
const std::set<std::string>& case_keys();                                   // the keys of a case entry
const std::set<std::string>& case_sub_keys(const std::string& mapping);     // empty for a key that is no mapping
// The case keys a model preset sets (a mapping is taken whole). A case naming a model takes them from the preset,
// not from the suite's defaults: precedence is the case's own keys > its model preset > defaults.
const std::set<std::string>& preset_keys();

// Reads every row's key of one case (its model preset first), in table order.
void read_case_fields(const Reader& r, const CaseNode& n, CaseSpec& c);

// A number as the id spells it: a whole number as such (10), else the shortest %g that reads back as the same
// float (1.702, 2.5, 1e-06).
std::string id_number(float v);

}  // namespace moe
