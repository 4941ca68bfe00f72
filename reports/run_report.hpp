// The run report's data model (plain values, no harness types), written as versioned JSON and a Markdown summary.
// Schema: reports/schema/run_report.schema.json (kRunReportSchemaVersion).
#pragma once
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/verdict.hpp"

namespace moe {

inline constexpr int kRunReportSchemaVersion = 1;

// Where one case's wall time went, in seconds, phase by phase (0 for a phase that did not run): the pristine
// checkpoint generated (or its cached weights cloned and the inputs drawn), its fingerprint taken (before the kernel
// and again after it), the references computed, the working clone made and prepared by the kernel, copied to the
// device (0 on the host), the kernel run, the probes, the judging, and the record written (test properties, the
// report's slot). report.json writes it as the case's `timing.phases_s`.
struct CaseTiming {
  double generate = 0, fingerprint = 0, reference = 0, clone_prepare = 0, upload = 0, kernel = 0, probes = 0,
         judge = 0, write = 0;
};
// The phases in report order, by name: the one list the JSON writer, the reader, summary.md and the HTML use.
inline constexpr std::pair<const char*, double CaseTiming::*> kTimingPhases[] = {
    {"generate", &CaseTiming::generate}, {"fingerprint", &CaseTiming::fingerprint},
    {"reference", &CaseTiming::reference}, {"clone_prepare", &CaseTiming::clone_prepare},
    {"upload", &CaseTiming::upload}, {"kernel", &CaseTiming::kernel}, {"probes", &CaseTiming::probes},
    {"judge", &CaseTiming::judge}, {"write", &CaseTiming::write}};
// One systematic-error statistic of a case (verdict/systematic.hpp): a standardized value z against its threshold
// and an effect size against its floor; it fails when both are exceeded. `status` is "ran" or "not run: <why>"
// (then z and effect are NaN: never a 0 that reads as "found nothing").
struct StatisticRecord {
  std::string name;    // gain, channel, rounding_bias, expert
  std::string status;  // "ran" | "not run: <why>"
  double z = 0, z_threshold = 0, effect = 0, effect_floor = 0;
  std::string at;      // where the worst value is ("channel 17", "expert 3 (4 of 16 tokens)"), or ""
  bool failed = false;
  // The standard-error scale z was computed at (1, or the envelope's: verdict/envelope.hpp), and what the envelope
  // measures on its members: the RMS of the components' z at that scale (a scalar statistic: |z|; the one-sided
  // channel: its upper half, doubled), the number of components (1 for a scalar), and the shown component's z
  // before the correction for their number. NaN / 0 where not measured.
  double se_scale = 1, spread = std::numeric_limits<double>::quiet_NaN(), z_single = std::numeric_limits<double>::quiet_NaN();
  double components = 0;
  double se_floor = 0;  // a two-sided maximum's: added in quadrature to each component's scaled standard error
  bool ran() const { return status == "ran"; }
  // What the threshold is compared with: z itself for the one-sided channel statistic (an excess of error energy;
  // a negative z is less error than expected), |z| for the two-sided others.
  double tested_z() const { return name == "channel" ? z : (z < 0 ? -z : z); }
  // How close it came to failing: it fails when both limits are passed, so the smaller of the two shares (1: at it).
  double closeness() const {
    const double a = tested_z() / z_threshold, b = (effect < 0 ? -effect : effect) / effect_floor;
    return a < b ? a : b;
  }
};

// The rounding contract a judged case was judged against (docs/judging.md "The rounding contract"): its canonical
// text (fixtures/rounding_contract.hpp), where it came from (default, case, kernel or pinned), what the kernel
// declared ("default": nothing) and the declared points the case did not apply ("" when none). Empty `effective`:
// no contract was resolved (a skipped case, a report written before contracts).
struct ContractRecord {
  std::string effective, source, declared, not_applied;
  bool operator==(const ContractRecord&) const = default;
};

struct CaseRecord {
  std::string id, kernel;
  Status status = Status::error;  // never left unset: a record no code filled in is not a verdict
  std::string reason;   // skip reason, failure summary, or the harness error
  Check failed_check = Check::none;
  std::string source;   // file:line of the case
  std::string variant;  // what the kernel dispatched
  std::map<std::string, double> metrics;  // min_cos, max_rel, max_abs, mismatch_fraction, ...; NaN: undefined
  std::vector<double> token_cos, token_rel;  // NaN: a token with unwritten or non-finite elements
  // Each check beyond the verdict (the pipeline's structural probes, an external output's fixture fingerprint), in
  // order: "ran" or "not run: <why>". A probe that did not run has no mismatch metrics.
  std::vector<std::pair<std::string, std::string>> probes;
  double kernel_us = 0, reference_s = 0;  // reference_s: generate + fingerprint + reference
  CaseTiming timing;
  std::string details;  // multi-line diagnostics (worst tokens and elements)
  std::uint64_t fixture_fingerprint = 0;
  std::vector<StatisticRecord> systematic;  // statistical tier, judged cases: gain, channel, rounding_bias, expert
  ContractRecord contract;
};

// The largest per-token rel the verdict's max_rel check judged: strict_max_rel (the tokens of a requantization band
// that held excluded, docs/judging.md), else max_rel; NaN without either (a case that judged no output).
inline double judged_max_rel(const CaseRecord& r) {
  for (const char* k : {"strict_max_rel", "max_rel"})
    if (const auto it = r.metrics.find(k); it != r.metrics.end()) return it->second;
  return std::numeric_limits<double>::quiet_NaN();
}

// The smallest per-token cos the verdict's min_cos check judged: strict_min_cos (as above), else min_cos; NaN without
// either.
inline double judged_min_cos(const CaseRecord& r) {
  for (const char* k : {"strict_min_cos", "min_cos"})
    if (const auto it = r.metrics.find(k); it != r.metrics.end()) return it->second;
  return std::numeric_limits<double>::quiet_NaN();
}

// The fraction of elements outside the tolerance the mismatch_fraction check judged: strict_mismatch_fraction (the
// requantization band's tokens excluded, docs/judging.md), else mismatch_fraction; NaN without either.
inline double judged_mismatch_fraction(const CaseRecord& r) {
  for (const char* k : {"strict_mismatch_fraction", "mismatch_fraction"})
    if (const auto it = r.metrics.find(k); it != r.metrics.end()) return it->second;
  return std::numeric_limits<double>::quiet_NaN();
}

// Each phase summed over the cases (CaseRecord or ReportCase: anything with a `timing`).
template <class Cases>
CaseTiming timing_total(const Cases& cases) {
  CaseTiming t;
  for (const auto& c : cases)
    for (auto [name, field] : kTimingPhases) t.*field += c.timing.*field;
  return t;
}

struct Provenance {
  std::string harness_version, harness_commit;
  std::vector<std::pair<std::string, std::string>> kernels;  // id, version
  std::string device_name, device_arch, device_vendor, driver_version, runtime_version, device_message;
  int compute_units = 0;
  std::string suite, suite_file;
  std::uint64_t suite_hash = 0;
  std::string seed;  // "case" when each case keeps its own seed, else the override
  std::string sequence;  // a call sequence's order and seed ("shuffled, seed 7", "scripted"); "": not a sequence
  std::string start_time, end_time;  // UTC ISO 8601
  std::string host;
  // A run stopped before every selected (case, kernel) was judged (SIGINT/SIGTERM, or a report rebuilt from the
  // journal of a run that was killed): the report holds the records that exist, and says why it is not whole.
  bool incomplete = false;
  std::string incomplete_reason;
};

struct RunReport {
  Provenance provenance;
  std::vector<CaseRecord> cases;
  // An incomplete run's selected (kernel id, case id) that got no record, in run order: junit.xml lists each as an
  // error (a CI gate reading it must not go green). Not in report.json: a rebuilt report knows only their number.
  std::vector<std::pair<std::string, std::string>> unjudged;
  int count(Status status) const;
};

// Whether any case's own input was found bad while it was judged (failed_check bad_input): the run exits 2.
bool any_bad_input(const RunReport& r);

std::string to_json_text(const RunReport& r);
std::string to_markdown(const RunReport& r);
// report_dir/report.json and report_dir/summary.md, each written atomically.
void write_reports(const RunReport& r, const std::filesystem::path& json_path, const std::filesystem::path& md_path);

std::string utc_now_iso8601();

}  // namespace moe
