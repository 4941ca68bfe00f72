#include "harness/batch/batch_judge.hpp"

#include <chrono>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <string>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "harness/batch/export_index.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/case/case_thresholds.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/pipeline/slot_steps.hpp"
#include "harness/run/progress.hpp"
#include "harness/run/provenance.hpp"
#include "harness/run/report_dir.hpp"
#include "harness/pipeline/rounding_resolution.hpp"
#include "harness/run/runner.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "kernels/external/external_output_kernel.hpp"
#include "reports/report_files.hpp"
#include "reports/run_report.hpp"  // any_bad_input

namespace moe {

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kExportedReference = "exported_reference";  // the record's probe saying which reference judged

// The value of `name` in a ReferenceCache::key ("...|name=VALUE|..."); "" when absent.
std::string key_field(const std::string& key, const std::string& name) {
  const std::string tag = "|" + name + "=";
  const std::size_t at = key.find(tag);
  if (at == std::string::npos) return "";
  const std::size_t from = at + tag.size();
  return key.substr(from, key.find('|', from) - from);
}

// Why the exported reference of `e` cannot be used for c judged under `effective` ("" when it can), and the
// references when it can.
std::string distrust(const ExportEntry& e, const ExportIndex& index, const CaseSpec& c, const ResolvedContract& rc,
                     const std::filesystem::path& file, std::optional<ReferenceSet>& refs) {
  if (index.reference_version != reference_version())
    return "the harness's reference version is " + reference_version().substr(0, 12) + ", the export's " +
           index.reference_version.substr(0, 12) + " (the oracle or the fixture generator changed)";
  const std::string key = ReferenceCache::key(c, rc.record.effective, e.fixture_fingerprint);
  if (key != e.reference_key) {
    const std::string was = key_field(e.reference_key, "contract"), now = key_field(key, "contract");
    if (was != now) return "exported under rounding contract " + was + ", judged under " + now;
    return "the case's definition in the suite changed since export";
  }
  // A narrow accumulator's maxima explain their largest components by the requantization steps, which need the
  // weights (harness/pipeline/slot_steps.hpp); the exported envelope's sparse members were explained: judged without
  // the weights, the kernel would meet their thresholds unexplained.
  if (narrow_accumulation(rc.problem))
    return "the contract declares a narrow accumulator (accum=mma" + std::to_string(rc.problem.accum_bits) +
           "): its maxima's requantization steps are computed from the weights";
  refs = read_reference_file(file, key, rc.problem);
  if (!refs) return file.string() + " is missing, unreadable or records another key";
  if (reference_hash(*refs) != e.reference_hash) {
    refs.reset();
    return file.string() + "'s contents differ from what export recorded (hash " +
           fmt::format("{:016x}", e.reference_hash) + ")";
  }
  refs->rounding = rc.record;
  return "";
}

// The case judged on its exported reference: no fixture is generated, the kernel's output file is the output.
CaseRecord judge_on_exported(const CaseSpec& c, ExternalOutputKernel& k, const DeviceDetection& device,
                             const ResolvedContract& rc, ReferenceSet& refs, std::uint64_t fingerprint,
                             double read_s) {
  CaseRecord rec;
  if (!start_record(rec, c, k, device, {})) return rec;
  try {
    const ProblemSpec& p = rc.problem;
    rec.fixture_fingerprint = fingerprint;
    rec.timing.reference = rec.reference_s = read_s;
    Checkpoint none;  // an output read from a file needs no tensors: it cannot run again
    Tensor out("out", p.output_dtype, {p.tokens, p.hidden});
    fill_sentinel(out, 0);
    const Clock::time_point t = Clock::now();
    const RunInfo info = k.run(p, none, refs.routing, out);
    rec.timing.kernel = std::chrono::duration<double>(Clock::now() - t).count();
    rec.variant = info.variant;
    // As `run` does (case_pipeline.hpp needs_envelope): the exported envelope judges only an output that fails at
    // the case's own thresholds, so this record is the one `run` writes for the same output.
    Envelope exported = std::move(refs.envelope);
    refs.envelope = {};
    std::optional<CaseRecord> judged;  // the verdict without the envelope, where that is the verdict
    const bool widen = !exported.empty() && needs_envelope(p, refs, out, case_thresholds(c), nullptr, nullptr, &judged);
    if (widen) refs.envelope = std::move(exported);
    verdict_and_probes(rec, c, p, k, none, refs, out, info, {}, nullptr, nullptr, judged && !widen ? &*judged : nullptr);
  } catch (...) {
    record_exception(rec);
  }
  return rec;
}

CaseRecord error_record(const std::string& id, const std::string& kernel, std::string reason,
                        Check check = Check::harness_error) {
  CaseRecord r;
  r.id = id;
  r.kernel = kernel;
  r.status = Status::error;
  r.failed_check = check;
  r.reason = std::move(reason);
  return r;
}

// A judged record says which reference judged it: probe exported_reference and a line of its details.
CaseRecord with_reference_note(CaseRecord rec, const std::string& probe, const std::string& line) {
  if (rec.status == Status::skip || rec.failed_check == Check::gating) return rec;
  rec.probes.emplace_back(kExportedReference, probe);
  rec.details += "  reference: " + line + "\n";
  return rec;
}

struct Counts {
  int exported_reference = 0, recomputed = 0;
};

CaseRecord judge_entry(const BatchJudgeOptions& opt, const ExportIndex& index, const ExportEntry& e, const Suite& suite,
                       const std::map<std::string, const CaseSpec*>& by_id, const RoundingContract& declared,
                       const DeviceDetection& device, WeightCache& weights, Counts& counts) {
  // Not exported: the export's failed_check kept (bad_input: the case's own input, exit 2).
  if (!e.exported) return error_record(e.id, opt.kernel_id, "not exported: " + e.reason, e.failed_check);
  const auto found = by_id.find(e.id);
  const CaseSpec* c = found == by_id.end() ? nullptr : found->second;
  if (!c)
    return error_record(e.id, opt.kernel_id,
                        "bad input: " + suite.file + ": no case with id " + e.id +
                            " any more (the suite changed since export); fix: export the suite again, or judge with "
                            "--suite naming the suite it was exported from");
  const std::filesystem::path case_dir = opt.dir / e.dir;
  std::shared_ptr<ExternalOutputKernel> k;
  try {  // the output: present, whole, [tokens, hidden] in the output dtype, computed from the exported fixture
    k = std::make_shared<ExternalOutputKernel>(opt.kernel_id, case_dir / opt.output, opt.tensor, c->problem);
    k->declare_contract(declared);
    k->check_fixture(e.fixture_fingerprint, e.id, opt.allow_missing_fingerprint);
  } catch (const Error& err) {
    return error_record(e.id, opt.kernel_id, err.what());
  }
  const ResolvedContract rc = resolve_contract(*c, c->problem, declared);
  const Clock::time_point t = Clock::now();
  std::optional<ReferenceSet> refs;
  const std::string why = opt.recompute ? "--recompute" : distrust(e, index, *c, rc, case_dir / "reference.safetensors", refs);
  const double read_s = std::chrono::duration<double>(Clock::now() - t).count();
  if (why.empty()) {
    ++counts.exported_reference;
    return with_reference_note(judge_on_exported(*c, *k, device, rc, *refs, e.fixture_fingerprint, read_s), "ran",
                               "the exported reference.safetensors (its key and hash matched the index)");
  }
  ++counts.recomputed;
  PipelineOptions po;
  po.weights = &weights;
  CaseRecord rec = execute_case(*c, *k, device, po);
  // A fingerprint only when the fixture was generated (not skipped, no error on the way): it must be the export's.
  const bool generated = rec.status == Status::pass || (rec.status == Status::fail && rec.failed_check != Check::gating);
  if (generated && rec.fixture_fingerprint != e.fixture_fingerprint)
    return error_record(e.id, opt.kernel_id,
                        fmt::format("bad input: {}: this harness generates fixture {:016x} for the case, the export holds "
                                    "{:016x}, so the output was computed from inputs this harness no longer makes; fix: "
                                    "export the suite again and rerun the program on it",
                                    (case_dir / "fixture.safetensors").string(), rec.fixture_fingerprint,
                                    e.fixture_fingerprint));
  return with_reference_note(std::move(rec), "not run: recomputed (" + why + ")", "recomputed (" + why + ")");
}

}  // namespace

int judge_directory(const BatchJudgeOptions& opt) {
  // Every input problem is found before anything is written (exit 2).
  const ExportIndex index = read_export_index(opt.dir);
  const Suite suite = load_suite_file(resolve_suite(opt.suite.empty() ? index.suite_file : opt.suite));
  const RoundingContract declared = parse_rounding_contract_or_throw(opt.contract, "command line", "--contract");
  if (std::filesystem::path(opt.output).is_absolute() || opt.output.empty())
    throw_bad_input("command line", "--output", "'" + opt.output + "' is not a file name inside each case directory",
                    "give the output's name relative to the case directories, e.g. out.safetensors");
  RunOptions outputs;  // where the reports go; none of them may be an input
  outputs.suite = suite.file;
  outputs.report_dir = opt.report_dir;
  outputs.junit = opt.junit;
  outputs.json = opt.json;
  run_output_guard(outputs).input(std::filesystem::path(opt.dir) / "index.json", "--dir").check();
  ReportDir report_dir(opt.report_dir);
  report_dir.keep();
  const std::filesystem::path& dir = report_dir.path();

  const DeviceDetection device = detect_device();
  RunReport report;
  report.provenance = make_provenance(suite, {{opt.kernel_id, "file:" + opt.output}}, device, std::nullopt);
  report.provenance.start_time = utc_now_iso8601();
  std::map<std::string, const CaseSpec*> by_id;
  for (const CaseSpec& c : suite.cases) by_id.emplace(c.id, &c);
  WeightCache weights;
  Counts counts;
  const Clock::time_point t0 = Clock::now();
  // A stop signal: the case in flight (judged in this process) ends, the rest are not judged; the reports are
  // written, marked incomplete, and the exit is 128 + N (harness/isolation/stop_signal.hpp).
  const StopSignals stop("stopping after the case in flight");
  for (const ExportEntry& e : index.cases) {
    if (stop_requested()) break;
    report.cases.push_back(judge_entry(opt, index, e, suite, by_id, declared, device, weights, counts));
    const CaseRecord& r = report.cases.back();
    if (r.status == Status::fail || r.status == Status::error)
      std::fprintf(stderr, "%s %s: %s\n", r.status == Status::fail ? "FAIL" : "ERROR", r.id.c_str(), r.reason.c_str());
  }
  report.provenance.end_time = utc_now_iso8601();
  if (stop_requested()) {
    report.provenance.incomplete = true;
    report.provenance.incomplete_reason =
        fmt::format("interrupted by {}: {} of the {} case(s) of {} judged; judge --dir again for all", stop_signal_name(),
                    report.cases.size(), index.cases.size(), (opt.dir / kExportIndexFile).string());
  }
  write_report_files(report, {opt.json.empty() ? dir / "report.json" : opt.json,
                              opt.junit.empty() ? dir / "junit.xml" : opt.junit, dir / "summary.md", dir / "report.html"});
  print_recap(stdout, report.cases, RerunRecipe{});
  const int pass = report.count(Status::pass), fail = report.count(Status::fail), skip = report.count(Status::skip),
            err = report.count(Status::error);
  std::printf("judge --dir %s: references: %d from the export, %d recomputed\n", opt.dir.string().c_str(),
              counts.exported_reference, counts.recomputed);
  std::printf("moe-harness: %d passed, %d failed, %d skipped, %d errors in %s; report: %s\n", pass, fail, skip, err,
              format_duration(std::chrono::duration<double>(Clock::now() - t0).count()).c_str(),
              std::filesystem::absolute(dir / "report.html").string().c_str());
  if (stop_requested()) std::printf("moe-harness: %s\n", report.provenance.incomplete_reason.c_str());
  std::fflush(stdout);
  if (stop_requested()) return exit_code_for_stop();
  if (any_bad_input(report)) return int(ExitCode::bad_input);  // `run`'s order (harness/run/runner.cpp)
  if (err > 0) return int(ExitCode::harness_error);
  if (fail > 0) return int(ExitCode::case_failed);
  if (pass == 0) {
    std::fprintf(stderr, "moe-harness: nothing checked (exit 4): %zu case(s) in %s, none judged\n", index.cases.size(),
                 (opt.dir / kExportIndexFile).c_str());
    return int(ExitCode::nothing_checked);
  }
  return 0;
}

}  // namespace moe
