// A record's verdict vocabulary: its status and the check that decided it (docs/judging.md lists every check).
// Code compares the enums; the strings exist only where records become text: their JSON form
// (reports/record_json.cpp, the one writer and reader of report.json, the journal and the worker's reply), JUnit,
// Markdown, HTML and the terminal. The spellings are report.json's (reports/schema/run_report.schema.json).
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace moe {

enum class Status : std::uint8_t { pass, fail, skip, error };

enum class Check : std::uint8_t {
  none,  // "": the case passed, or was skipped
  // The judge (verdict/judge.cpp), in the order it checks.
  unwritten, non_finite, zero_output, bitwise, min_cos, max_rel, mismatch_fraction,
  // Systematic-error statistics (gain, per-channel error, rounding bias, one expert's error, a signed offset, one
  // token's gain, an error on some of an expert's token-slots, one direction of every slot, a channel group's gain).
  gain, channel, rounding_bias, expert, offset, token_gain, expert_partial, slot_direction, channel_group,
  // The structural probes after a pass (harness/pipeline/probes.hpp), then the token probes
  // (harness/pipeline/token_probes.hpp): padding rows, guard bytes, permuted tokens, relabeled experts; then the
  // device probes (harness/pipeline/device_probes.hpp): the harness's own stream, graph capture and replay.
  rerun, linearity, token_isolation, red_zone, token_permutation, expert_relabeling, stream_order, graph_replay,
  // Cases that could not be judged, or not here: gating, the pipeline's errors, the watchdog's verdicts.
  gating, harness_error, out_of_memory, crash, timeout,
  // The case's own input, found bad only while it was judged (fixtures/error.hpp CaseInputError): exit 2.
  bad_input,
};

std::string_view name(Status s);
std::string_view name(Check c);
std::optional<Status> parse_status(std::string_view s);
std::optional<Check> parse_check(std::string_view s);
std::string check_names_list();  // every spelling but "", for error messages

// fail and error: the statuses that fail a run (a skip does not).
inline bool failing(Status s) { return s == Status::fail || s == Status::error; }

inline std::string to_string(Status s) { return std::string(name(s)); }
inline std::string to_string(Check c) { return std::string(name(c)); }
// For test failure messages: the spelling, "" shown as none.
inline std::ostream& operator<<(std::ostream& o, Status s) { return o << name(s); }
inline std::ostream& operator<<(std::ostream& o, Check c) { return o << (c == Check::none ? "none" : name(c)); }

}  // namespace moe
