// docs/judging.md's table of the systematic statistics states each z threshold and floor once; this pins those
// figures to SystematicThresholds' defaults (verdict/thresholds.hpp), so the doc and the code cannot disagree.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "verdict/systematic.hpp"
#include "verdict/thresholds.hpp"

namespace moe {
namespace {

// The cells of a markdown table row: split at '|' not escaped as "\|".
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out(1);
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) out.emplace_back();
    else out.back() += row[i];
  }
  return out;
}

std::vector<double> numbers(const std::string& cell) {
  std::vector<double> v;
  static const std::regex num(R"((^|[^A-Za-z_0-9.])([0-9]+(\.[0-9]+)?(e-?[0-9]+)?))");
  for (auto it = std::sregex_iterator(cell.begin(), cell.end(), num); it != std::sregex_iterator(); ++it)
    v.push_back(std::stod((*it)[2].str()));
  return v;
}

// name -> (the z threshold cell's numbers, the floor cell's numbers), from the rows "| `name` | z | threshold |
// effect | floor | catches |".
std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> doc_table() {
  std::ifstream f(std::string(MOE_DOCS_DIR) + "/judging.md");
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> t;
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("| `", 0) != 0) continue;
    const auto c = cells(line);
    if (c.size() < 7) continue;
    const std::string name = c[1].substr(c[1].find('`') + 1, c[1].rfind('`') - c[1].find('`') - 1);
    t[name] = {numbers(c[3]), numbers(c[5])};
  }
  return t;
}

}  // namespace

TEST(SystematicDoc, TheTablesThresholdsAndFloorsAreTheCodes) {
  const auto table = doc_table();
  const SystematicThresholds th;
  const std::map<std::string, std::pair<double, std::vector<double>>> code = {
      {"gain", {th.gain_z, {th.gain_floor}}},
      {"channel", {th.channel_z, {th.channel_floor}}},
      {"rounding_bias", {th.rounding_z, {th.rounding_floor}}},
      {"expert", {th.expert_z, {th.expert_own_floor, th.expert_floor}}},
      {"offset", {th.offset_z, {th.offset_floor}}},
      {"token_gain", {th.token_gain_z, {th.token_gain_floor}}},
      {"expert_partial", {th.expert_partial_z, {th.expert_partial_floor}}},
      {"slot_direction", {th.slot_direction_z, {th.slot_direction_floor}}},
      {"channel_group", {th.channel_group_z, {th.channel_group_floor}}},
  };
  ASSERT_EQ(code.size(), std::size(kSystematicNames));
  for (const char* name : kSystematicNames) {
    ASSERT_TRUE(table.count(name)) << "docs/judging.md has no row for `" << name << "`";
    const auto& [z, floors] = table.at(name);
    ASSERT_EQ(z.size(), 1u) << name;
    EXPECT_DOUBLE_EQ(z[0], code.at(name).first) << name << ": the doc's z threshold";
    ASSERT_EQ(floors.size(), code.at(name).second.size()) << name;
    for (std::size_t i = 0; i < floors.size(); ++i)
      EXPECT_DOUBLE_EQ(floors[i], code.at(name).second[i]) << name << ": the doc's floor " << i;
  }
}

}  // namespace moe

namespace moe {

// The floors follow the kernel's declaration through the envelope (verdict/envelope.hpp), not the scheme: on every
// scheme the defaults are the documented ones above, so a kernel that accumulates exactly is held to them on a
// quantized scheme too.
TEST(SystematicDoc, EverySchemeStartsFromTheDocumentedFloors) {
  const SystematicThresholds doc;
  ProblemSpec bf16, fp8, mx;
  fp8.quant.weight = WeightFormat::fp8_block;
  fp8.quant.act = ActFormat::fp8_group128;
  mx.quant.weight = WeightFormat::mxfp4;
  mx.quant.act = ActFormat::mxfp8;
  for (const ProblemSpec* p : {&bf16, &fp8, &mx}) {
    const SystematicThresholds t = default_thresholds(*p, Tier::statistical).systematic;
    EXPECT_EQ(t.gain_floor, doc.gain_floor);
    EXPECT_EQ(t.channel_floor, doc.channel_floor);
    EXPECT_EQ(t.rounding_floor, doc.rounding_floor);
    EXPECT_EQ(t.expert_floor, doc.expert_floor);
    EXPECT_EQ(t.expert_own_floor, doc.expert_own_floor);
    EXPECT_EQ(t.offset_floor, doc.offset_floor);
    EXPECT_EQ(t.token_gain_floor, doc.token_gain_floor);
    EXPECT_EQ(t.expert_partial_floor, doc.expert_partial_floor);
    EXPECT_EQ(t.slot_direction_floor, doc.slot_direction_floor);
    EXPECT_EQ(t.channel_group_floor, doc.channel_group_floor);
  }
}

}  // namespace moe
