// The verdict enums' spellings are report.json's: the schema's enums (reports/schema/run_report.schema.json) parse
// to values that print back the same, and no two values share a spelling.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "reports/verdict.hpp"

namespace moe {
namespace {

nlohmann::json case_schema() {
  std::ifstream in(MOE_REPORT_SCHEMA);
  const nlohmann::json s = nlohmann::json::parse(in);
  return s.at("properties").at("cases").at("items").at("properties");
}

TEST(Verdict, EveryStatusOfTheSchemaRoundTrips) {
  const auto statuses = case_schema().at("status").at("enum");
  ASSERT_EQ(statuses.size(), 4u);
  for (const auto& s : statuses) {
    const auto v = parse_status(s.get<std::string>());
    ASSERT_TRUE(v) << s;
    EXPECT_EQ(name(*v), s.get<std::string>());
  }
  EXPECT_FALSE(parse_status("passed"));
  EXPECT_FALSE(parse_status(""));
}

TEST(Verdict, EveryCheckOfTheSchemaRoundTripsAndSpellingsAreDistinct) {
  std::set<std::string> schema;
  const nlohmann::json checks = case_schema().at("failed_check").at("enum");
  for (const auto& c : checks) {
    const std::string s = c.get<std::string>();
    schema.insert(s);
    const auto v = parse_check(s);
    ASSERT_TRUE(v) << "'" << s << "'";
    EXPECT_EQ(name(*v), s);
  }
  EXPECT_EQ(parse_check(""), Check::none);
  std::set<std::string> names;
  for (int i = 0; i <= int(Check::bad_input); ++i) {
    const std::string n(name(Check(i)));
    EXPECT_TRUE(names.insert(n).second) << "two checks spelled '" << n << "'";
    EXPECT_EQ(parse_check(n), Check(i));
  }
  EXPECT_EQ(names, schema);  // the same checks, none missing from either side
  EXPECT_FALSE(parse_check("min_coss"));
  EXPECT_TRUE(failing(Status::fail) && failing(Status::error) && !failing(Status::pass) && !failing(Status::skip));
}

}  // namespace
}  // namespace moe
