// The case-field table (harness/case/case_fields.cpp) against the schema table of docs/cases.md, which users read, and the
// rules the loader, canonical_id() and case_to_json_text() rely on when they walk it.
#include "harness/case/case_fields.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#ifndef MOE_CASES_DOC
#error "MOE_CASES_DOC must name the repository's docs/cases.md (harness/CMakeLists.txt)"
#endif

namespace moe {
namespace {

// docs/cases.md: each row of its keys table, as (keys of the first column, text of the second).
std::vector<std::pair<std::vector<std::string>, std::string>> documented_schema_rows() {
  std::ifstream in(MOE_CASES_DOC);
  std::string line;
  while (std::getline(in, line) && line != "# Case files") {}
  std::vector<std::pair<std::vector<std::string>, std::string>> rows;
  bool in_table = false;
  while (std::getline(in, line) && line.rfind("## ", 0) != 0 && line.rfind("### ", 0) != 0) {
    if (line.rfind("| key |", 0) == 0) in_table = true;
    if (!in_table || line.rfind("| `", 0) != 0) {
      if (in_table && line.empty()) break;
      continue;
    }
    std::vector<std::string> cols;  // split at '|' that is not escaped
    std::string cur;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '|' && line[i - 1] != '\\') {
        cols.push_back(cur);
        cur.clear();
      } else {
        cur += line[i];
      }
    }
    std::vector<std::string> keys;
    const std::regex tick("`([a-z_0-9]+)`");
    for (std::sregex_iterator it(cols.at(0).begin(), cols.at(0).end(), tick), end; it != end; ++it) keys.push_back((*it)[1]);
    rows.emplace_back(keys, cols.at(1));
  }
  return rows;
}

// The keys a `{a: x | y, b, c: [1, 2]}` mapping of the table names: a, b, c.
std::vector<std::string> braced_keys(const std::string& text) {
  std::vector<std::string> out;
  const std::size_t open = text.find('{'), close = text.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return out;
  int depth = 0;
  std::string piece;
  for (std::size_t i = open + 1; i <= close; ++i) {
    const char ch = text[i];
    if (ch == '[') ++depth;
    if (ch == ']') --depth;
    if ((ch == ',' && depth == 0) || i == close) {
      std::smatch m;
      if (std::regex_search(piece, m, std::regex("^\\s*([a-z_0-9]+)"))) out.push_back(m[1]);
      piece.clear();
    } else {
      piece += ch;
    }
  }
  return out;
}

std::map<std::string, const CaseField*> rows_by_key() {
  std::map<std::string, const CaseField*> m;
  for (const CaseField& f : case_fields())
    if (!f.key.empty()) m[f.key] = &f;
  return m;
}

}  // namespace

// Every key the table reads is documented, and docs/cases.md documents no key the loader would refuse.
TEST(CaseFields, TheDocumentedSchemaTableNamesEveryKeyAndNoOther) {
  const auto rows = documented_schema_rows();
  ASSERT_GT(rows.size(), 10u) << "no keys table under \"# Case files\" in " << MOE_CASES_DOC;
  std::set<std::string> documented;
  for (const auto& [keys, values] : rows) {
    std::vector<std::string> maps;
    for (const std::string& k : keys) {
      documented.insert(k);
      if (!case_sub_keys(k).empty()) maps.push_back(k);
    }
    for (const std::string& sub : braced_keys(values)) {
      ASSERT_FALSE(maps.empty()) << "docs/cases.md lists {" << sub << "} in a row of no mapping key";
      for (const std::string& m : maps) documented.insert(m + "." + sub);
    }
  }
  const auto table = rows_by_key();
  for (const auto& [key, f] : table) EXPECT_TRUE(documented.count(key)) << key << " is missing from docs/cases.md";
  for (const std::string& key : documented) EXPECT_TRUE(table.count(key)) << "docs/cases.md documents " << key << ", which no row reads";
}

// A key that changes the problem but not the id would give two different problems one id (the loader would refuse
// them as duplicates; a report, drift or the reference cache could match one with the other).
TEST(CaseFields, EveryProblemKeyHasAnIdFragment) {
  const auto table = rows_by_key();
  for (const auto& [key, f] : table) {
    if (!f->problem || f->mapping) continue;
    const auto dot = key.find('.');
    const bool mapping_spells_it = dot != std::string::npos && table.at(key.substr(0, dot))->id;
    EXPECT_TRUE(f->id || mapping_spells_it) << key << " changes the problem and adds nothing to the id";
  }
}

// The walks rely on these: keys and JSON names unique, one place in the id per fragment, a mapping's keys right
// after it (its `after` runs once they are read), every row of a case key either read or derived.
TEST(CaseFields, RowsAreUniqueAndMappingsAreFollowedByTheirKeys) {
  std::set<std::string> keys, json;
  std::set<int> orders;
  const CaseField* mapping = nullptr;
  for (const CaseField& f : case_fields()) {
    if (!f.key.empty()) { EXPECT_TRUE(keys.insert(f.key).second) << "key " << f.key << " twice"; }
    if (!f.json.empty()) { EXPECT_TRUE(json.insert(f.json).second) << "case.json name " << f.json << " twice"; }
    if (f.id) { EXPECT_TRUE(orders.insert(f.id_order).second) << f.key << ": id order " << f.id_order << " taken"; }
    EXPECT_EQ(f.key.empty(), f.read == nullptr) << f.key << f.json;
    const auto dot = f.key.find('.');
    if (dot != std::string::npos) {
      ASSERT_NE(mapping, nullptr) << f.key << " follows no mapping";
      EXPECT_EQ(f.key.substr(0, dot), mapping->key) << f.key << " is not next to its mapping";
    } else {
      mapping = f.mapping ? &f : nullptr;
    }
    if (f.mapping) { EXPECT_FALSE(case_sub_keys(f.key).empty()) << f.key; }
  }
}

}  // namespace moe
