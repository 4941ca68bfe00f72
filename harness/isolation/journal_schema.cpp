#include "harness/isolation/journal_schema.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "fixtures/error.hpp"
#include "harness/isolation/journal.hpp"
#include "harness/tuning/sha256.hpp"

namespace moe {

nlohmann::ordered_json run_digests(const nlohmann::ordered_json& run) {
  nlohmann::ordered_json d = nlohmann::ordered_json::object();
  for (const auto& [key, value] : run.items())
    d[key] = sha256_hex(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)).substr(0, 16);
  return d;
}

namespace journal_schema {  // named: the unity build joins this file with others

using JournalJson = nlohmann::ordered_json;

const char* const kFix = "the journal is written by the harness only; restore it or rerun the suite";

enum class Kind { string, unsigned_int, seed, boolean, object, strings, budget };

bool is(const JournalJson& v, Kind k) {
  switch (k) {
    case Kind::string:
      return v.is_string();
    case Kind::unsigned_int:
      return v.is_number_unsigned();
    case Kind::seed:
      return v.is_null() || v.is_number_unsigned();  // never a negative number read back wrapped
    case Kind::boolean:
      return v.is_boolean();
    case Kind::object:
      return v.is_object();
    case Kind::strings:
      if (!v.is_array()) return false;
      for (const JournalJson& e : v)
        if (!e.is_string()) return false;
      return true;
    case Kind::budget:  // --host-budget: 0 (the kernel's default) or a positive FLOP count up to 1e30
      return v.is_number() && !v.is_number_integer()
                 ? std::isfinite(v.get<double>()) && v.get<double>() >= 0 && v.get<double>() <= 1e30
                 : v.is_number_unsigned();
  }
  return false;
}

const char* what(Kind k) {
  switch (k) {
    case Kind::string:
      return "a string";
    case Kind::unsigned_int:
      return "an unsigned integer";
    case Kind::seed:
      return "null or an unsigned integer below 2^64";
    case Kind::boolean:
      return "true or false";
    case Kind::object:
      return "an object";
    case Kind::strings:
      return "an array of strings";
    case Kind::budget:
      return "a number in [0, 1e30]";
  }
  return "";
}

struct Field {
  Kind kind;
  bool required;
};

// `o` holds every required key of `fields`, each of its kind, and no other key.
void check_fields(const JournalJson& o, const std::map<std::string, Field>& fields, const std::string& where,
                  const std::string& prefix) {
  for (const auto& [key, f] : fields)
    if (f.required && !o.contains(key)) throw_bad_input(where, prefix + key, "missing", kFix);
  for (const auto& [key, v] : o.items()) {
    const auto it = fields.find(key);
    if (it == fields.end()) {
      std::string known;
      for (const auto& [k, f] : fields) known += (known.empty() ? "" : ", ") + k;
      throw_bad_input(where, prefix + key, "unknown key", "a journal line holds only: " + known + "; " + kFix);
    }
    if (!is(v, it->second.kind))
      throw_bad_input(where, prefix + key, fmt::format("{} is not {}", v.dump(), what(it->second.kind)), kFix);
  }
}

JournalLine check_line(const JournalJson& l, const std::string& where) {
  if (!l.is_object()) throw_bad_input(where, "type", "the line is not a JSON object", kFix);
  if (!l.contains("type") || !l["type"].is_string()) throw_bad_input(where, "type", "missing, or not a string", kFix);
  const std::string type = l["type"];
  const Field time{Kind::string, false};
  if (type == "start") {
    check_fields(l,
                 {{"type", {Kind::string, true}},
                  {"journal_version", {Kind::unsigned_int, true}},
                  {"provenance", {Kind::object, true}},
                  {"run", {Kind::object, true}},
                  {"run_digest", {Kind::object, false}},
                  {"time", time}},
                 where, "");
    if (l["journal_version"].get<std::uint64_t>() != std::uint64_t(kJournalVersion))
      throw_bad_input(where, "journal_version",
                      fmt::format("{} is not {}", l["journal_version"].dump(), kJournalVersion),
                      "pass a report directory written by this harness version");
    return JournalLine::start;
  }
  if (type == "plan") {
    check_fields(l, {{"type", {Kind::string, true}}, {"tests", {Kind::unsigned_int, true}}, {"time", time}}, where, "");
    if (l["tests"].get<std::uint64_t>() > kMaxJournalSlot)
      throw_bad_input(where, "tests",
                      fmt::format("{} is past the largest run, {} tests", l["tests"].dump(), kMaxJournalSlot), kFix);
    return JournalLine::plan;
  }
  if (type == "record") {
    check_fields(l,
                 {{"type", {Kind::string, true}},
                  {"slot", {Kind::unsigned_int, false}},
                  {"record", {Kind::object, true}},
                  {"time", time}},
                 where, "");
    const JournalJson& slot =
        l.contains("slot") ? l["slot"] : JournalJson();  // a test's index among the run's registered tests
    if (!slot.is_number_unsigned() || slot.get<std::uint64_t>() >= kMaxJournalSlot)
      throw_bad_input(where, "slot",
                      slot.dump() + " is not a test index in [0, " + std::to_string(kMaxJournalSlot) + ")", kFix);
    return JournalLine::record;
  }
  if (type == "resume") {
    check_fields(l, {{"type", {Kind::string, true}}, {"harness_commit", {Kind::string, true}}, {"time", time}}, where,
                 "");
    return JournalLine::resume;
  }
  if (type == "end") {
    check_fields(l, {{"type", {Kind::string, true}}, {"interrupted", {Kind::string, true}}, {"time", time}}, where, "");
    static const std::set<std::string> signals = {"", "SIGINT", "SIGTERM"};
    if (!signals.count(l["interrupted"].get<std::string>()))
      throw_bad_input(where, "interrupted", l["interrupted"].dump() + " is not \"\", \"SIGINT\" or \"SIGTERM\"", kFix);
    return JournalLine::end;
  }
  throw_bad_input(where, "type", "unknown line type " + l["type"].dump(),
                  "a journal holds start, plan, record, resume and end lines only; " + std::string(kFix));
}

void check_run(const JournalJson& start, const std::string& where) {
  const JournalJson& run = start["run"];
  check_fields(run,
               {{"suite_file", {Kind::string, true}},
                {"filters", {Kind::strings, true}},
                {"kernels", {Kind::strings, true}},
                {"plugins", {Kind::strings, true}},
                {"seed", {Kind::seed, true}},
                {"junit", {Kind::string, true}},
                {"json", {Kind::string, true}},
                {"device_required", {Kind::boolean, true}},
                {"device_arch", {Kind::string, true}},
                {"reference_cache", {Kind::string, true}},
                {"timing", {Kind::boolean, true}},
                {"token_probes", {Kind::boolean, false}},
                {"sequence_seed", {Kind::seed, false}},
                {"host_budget", {Kind::budget, true}},
                {"dispatch", {Kind::object, false}},
                {"dispatch_table", {Kind::string, false}},
                {"gtest_args", {Kind::strings, true}},
                {"gtest_total_shards", {Kind::string, false}},
                {"gtest_shard_index", {Kind::string, false}}},
               where, "run.");
  if (start.contains("run_digest")) {  // an option edited since the run wrote it is named, never used
    const nlohmann::ordered_json& digest = start["run_digest"];
    const nlohmann::ordered_json now = run_digests(run);
    for (const auto& [key, d] : now.items())
      if (!digest.contains(key) || digest[key] != d)
        throw_bad_input(where, "run." + key,
                        fmt::format("{} is not the value the run wrote (run_digest.{} differs)", run[key].dump(), key),
                        kFix);
    for (const auto& [key, d] : digest.items())
      if (!now.contains(key)) throw_bad_input(where, "run." + key, "missing (run_digest names it)", kFix);
  }
  // The provenance states the seed the run judged at ("case": each case's own); the options must say the same.
  const JournalJson& p = start["provenance"];
  if (p.contains("seed") && p["seed"].is_string()) {
    const std::string said = p["seed"],
                      run_seed = run["seed"].is_null() ? "case" : std::to_string(run["seed"].get<std::uint64_t>());
    if (said != run_seed)
      throw_bad_input(where, "run.seed",
                      fmt::format("{} disagrees with provenance.seed \"{}\" (the seed the run judged at)",
                                  run["seed"].dump(), said),
                      kFix);
  }
  if (run.contains("sequence_seed") && !run["sequence_seed"].is_null() && p.contains("sequence") &&
      p["sequence"].is_string()) {
    const std::string seq = p["sequence"], want = "seed " + std::to_string(run["sequence_seed"].get<std::uint64_t>());
    const std::size_t at = seq.find("seed ");
    if (at != std::string::npos && seq.substr(at) != want)
      throw_bad_input(where, "run.sequence_seed",
                      fmt::format("{} disagrees with provenance.sequence \"{}\"", run["sequence_seed"].dump(), seq),
                      kFix);
  }
}

}  // namespace journal_schema

JournalLine check_journal_line(const nlohmann::ordered_json& line, const std::string& where) {
  return journal_schema::check_line(line, where);
}

void check_journal_run(const nlohmann::ordered_json& start, const std::string& where) {
  journal_schema::check_run(start, where);
}

}  // namespace moe
