// Pieces of fault containment that need no process: the record's JSON form (report.json, the journal and the wire
// share it), the journal's reader, the watchdog's default limits, stale temporary files, the JUnit writer, the wire.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>

#include "fixtures/error.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "kernels/host/host_contract_kernel.hpp"
#include "harness/isolation/case_limits.hpp"
#include "harness/isolation/journal.hpp"
#include "harness/isolation/run_session.hpp"
#include "harness/isolation/wire.hpp"
#include "reports/junit_report.hpp"
#include "reports/record_json.hpp"

namespace moe {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("moe-isolation-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); }

CaseRecord sample_record() {
  CaseRecord r;
  r.id = "custom/T3/decode";
  r.kernel = "host-contract";
  r.status = Status::fail;
  r.reason = "min_cos: token 2 \"quoted\" ]]> <tag> & \x01 control";
  r.failed_check = Check::min_cos;
  r.source = "cases/x.yaml:7";
  r.variant = "host/atomic";
  r.metrics = {{"min_cos", 0.1 + 0.2}, {"max_rel", std::nan("")}, {"tiny", 4.9406564584124654e-324}};
  r.token_cos = {1.0, std::nan(""), 0.99999999999999989};
  r.token_rel = {0.0, std::numeric_limits<double>::infinity(), 1e-300};
  r.kernel_us = 12.5;
  r.reference_s = 0.25;
  r.details = "line one\nline two";
  r.fixture_fingerprint = 0xfedcba9876543210ull;
  return r;
}

TEST(RecordJson, RoundTripsEveryFieldBitForBitNonFiniteAsNaN) {
  const CaseRecord a = sample_record();
  const CaseRecord b = case_record_from_json(nlohmann::json::parse(case_record_to_json(a).dump()));
  EXPECT_EQ(b.id, a.id);
  EXPECT_EQ(b.kernel, a.kernel);
  EXPECT_EQ(b.status, a.status);
  EXPECT_EQ(b.reason, a.reason);
  EXPECT_EQ(b.failed_check, a.failed_check);
  EXPECT_EQ(b.source, a.source);
  EXPECT_EQ(b.variant, a.variant);
  EXPECT_EQ(b.details, a.details);
  EXPECT_EQ(b.fixture_fingerprint, a.fixture_fingerprint);
  EXPECT_EQ(b.kernel_us, 12.5);
  EXPECT_EQ(b.reference_s, 0.25);
  ASSERT_EQ(b.metrics.size(), 3u);
  for (const auto& [k, v] : a.metrics) EXPECT_TRUE(same_bits(b.metrics.at(k), v)) << k;
  ASSERT_EQ(b.token_cos.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(same_bits(b.token_cos[i], a.token_cos[i])) << i;
  EXPECT_TRUE(std::isnan(b.token_rel[1]));  // +Inf is written as null: JSON has no Inf; it reads back non-finite
  EXPECT_TRUE(same_bits(b.token_rel[2], 1e-300));
}

// The probes (each check beyond the verdict, in the order it ran) travel too, in order, when the document is parsed
// as ordered_json (the journal's and the worker's readers do): a record rebuilt from a journal equals the one written.
TEST(RecordJson, ProbesRoundTripInOrder) {
  CaseRecord a = sample_record();
  a.probes = {{"rerun", "ran"}, {"linearity_all_weights", "not run: the kernel is not deterministic"},
              {"fixture_fingerprint", "ran"}};
  const CaseRecord b = case_record_from_json(nlohmann::ordered_json::parse(case_record_to_json(a).dump()));
  EXPECT_EQ(b.probes, a.probes);
}

// The one reader checks every field it reads: missing or mistyped is bad input naming the file and the full key.
TEST(RecordJson, AMissingOrMistypedFieldIsBadInputNamingItsKey) {
  const nlohmann::ordered_json good = case_record_to_json(sample_record());
  for (const char* key : {"id", "status", "source", "timing", "metrics", "token_cos", "fixture_fingerprint", "details"}) {
    nlohmann::ordered_json j = good;
    j.erase(key);
    try {
      case_record_from_json(j, "journal.jsonl:4", "record");
      ADD_FAILURE() << "a record without " << key << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_EQ(e.where(), "journal.jsonl:4");
      EXPECT_EQ(e.key(), std::string("record.") + key);
    }
  }
  nlohmann::ordered_json j = good;
  j["timing"]["kernel_us"] = "fast";
  try {
    case_record_from_json(j, "journal.jsonl:4", "record");
    ADD_FAILURE() << "a string kernel_us was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "record.timing.kernel_us");
  }
  j = good;
  j["fixture_fingerprint"] = "xyz";
  EXPECT_THROW(case_record_from_json(j), Error);  // 16 lowercase hex digits, as the writer spells it
}

TEST(RecordJson, ProvenanceRoundTripsWithTheIncompleteMark) {
  Provenance p;
  p.harness_version = "0.1.0"; p.harness_commit = "abc+dirty.0123";
  p.kernels = {{"host-contract", "1"}, {"faulty-1", "1.0 (plugin libx.so)"}};
  p.device_message = "no GPU"; p.compute_units = 132; p.suite = "smoke"; p.suite_file = "/c/smoke.yaml";
  p.suite_hash = 0x0123456789abcdefull; p.seed = "case"; p.start_time = "2026-12-01T00:00:00Z";
  p.end_time = "2026-12-01T00:01:00Z"; p.host = "h"; p.incomplete = true; p.incomplete_reason = "interrupted by SIGTERM";
  const Provenance q = provenance_from_json(nlohmann::json::parse(provenance_to_json(p).dump()));
  EXPECT_EQ(q.kernels, p.kernels);
  EXPECT_EQ(q.suite_hash, p.suite_hash);
  EXPECT_EQ(q.compute_units, 132);
  EXPECT_TRUE(q.incomplete);
  EXPECT_EQ(q.incomplete_reason, "interrupted by SIGTERM");
  nlohmann::json old = provenance_to_json(p);  // a report written before the mark existed reads as complete
  old.erase("incomplete");
  old.erase("incomplete_reason");
  EXPECT_FALSE(provenance_from_json(old).incomplete);
}

nlohmann::ordered_json start_line() {
  Provenance p;
  p.suite = "smoke"; p.start_time = "2026-12-01T00:00:00Z"; p.end_time = ""; p.seed = "case"; p.harness_commit = "abc";
  return {{"type", "start"}, {"journal_version", kJournalVersion}, {"provenance", provenance_to_json(p)},
          {"run", run_options_to_json(RunOptions{})}};
}

TEST(Journal, RecordsBySlotLastOneWinsAndATornLastLineIsIgnored) {
  const fs::path dir = fresh_dir("journal");
  {
    JournalWriter w(journal_path(dir), false);
    w.write(start_line());
    w.write({{"type", "plan"}, {"tests", 3}});
    CaseRecord r = sample_record();
    w.write({{"type", "record"}, {"slot", 2}, {"record", case_record_to_json(r)}});
    r.status = Status::pass;
    w.write({{"type", "record"}, {"slot", 0}, {"record", case_record_to_json(r)}});
    r.status = Status::error;
    w.write({{"type", "record"}, {"slot", 2}, {"record", case_record_to_json(r)}});  // a later line replaces
  }
  std::ofstream(journal_path(dir), std::ios::app) << R"({"type":"record","slot":1,"rec)";  // killed mid-write
  const Journal j = read_journal(dir);
  EXPECT_TRUE(j.torn_tail);
  EXPECT_FALSE(j.finished);
  ASSERT_EQ(j.planned, std::optional<std::size_t>(3));
  ASSERT_EQ(j.records.size(), 2u);
  EXPECT_EQ(j.records.at(0).status, Status::pass);
  EXPECT_EQ(j.records.at(2).status, Status::error);
  const RunReport r = report_from_journal(j);
  ASSERT_EQ(r.cases.size(), 2u);
  EXPECT_EQ(r.cases[0].status, Status::pass);  // slot order
  EXPECT_TRUE(r.provenance.incomplete);
  EXPECT_NE(r.provenance.incomplete_reason.find("2 of the 3 selected test(s)"), std::string::npos)
      << r.provenance.incomplete_reason;
}

TEST(Journal, AnEndLineMakesItCompleteUnlessInterrupted) {
  const fs::path dir = fresh_dir("journal-end");
  {
    JournalWriter w(journal_path(dir), false);
    w.write(start_line());
    w.write({{"type", "plan"}, {"tests", 0}});
    w.write({{"type", "end"}, {"interrupted", ""}});
  }
  EXPECT_FALSE(report_from_journal(read_journal(dir)).provenance.incomplete);
  {
    JournalWriter w(journal_path(dir), true);
    w.write({{"type", "resume"}, {"harness_commit", "abc"}});
  }
  EXPECT_TRUE(report_from_journal(read_journal(dir)).provenance.incomplete);  // resumed, not finished yet
  {
    JournalWriter w(journal_path(dir), true);
    w.write({{"type", "end"}, {"interrupted", "SIGINT"}});
  }
  const RunReport r = report_from_journal(read_journal(dir));
  EXPECT_TRUE(r.provenance.incomplete);
  EXPECT_EQ(r.provenance.incomplete_reason.rfind("interrupted by SIGINT", 0), 0u) << r.provenance.incomplete_reason;
}

TEST(Journal, AMalformedLineBeforeTheLastOrNoJournalIsBadInput) {
  const fs::path dir = fresh_dir("journal-bad");
  try {
    read_journal(dir);
    FAIL() << "no journal was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
  }
  {
    JournalWriter w(journal_path(dir), false);
    w.write(start_line());
  }
  std::ofstream(journal_path(dir), std::ios::app) << "not json\n" << R"({"type":"plan","tests":1})" << "\n";
  try {
    read_journal(dir);
    FAIL() << "a malformed line was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    EXPECT_NE(std::string(e.what()).find("journal.jsonl:2"), std::string::npos) << e.what();
  }
}

TEST(StaleTempFiles, OnlyThoseOfDeadWritersGo) {
  const fs::path dir = fresh_dir("stale");
  const std::string dead = "report.json.tmp.999999999", live = "junit.xml.tmp." + std::to_string(::getpid());
  for (const std::string& f : {dead, live, std::string("report.json")}) std::ofstream(dir / f) << "x";
  const std::vector<std::string> removed = remove_stale_temp_files(dir);
  EXPECT_EQ(removed, std::vector<std::string>{dead});
  EXPECT_FALSE(fs::exists(dir / dead));
  EXPECT_TRUE(fs::exists(dir / live));
  EXPECT_TRUE(fs::exists(dir / "report.json"));
}

TEST(CaseLimits, DefaultTimeoutFromTheShapeByHand) {
  ProblemSpec p;
  p.hidden = 2048; p.inter = 512; p.experts = 256; p.topk = 8; p.n_shared = 1; p.shared_inter = 512; p.tp = 4;
  p.tokens = 128;
  // local inter 128: weight elements 3 * 2048 * (256 * 128 + 1 * 128) = 202,113,024;
  // FLOPs 2 * 128 * 3 * 2048 * (8 * 128 + 1 * 128) = 1,811,939,328.
  EXPECT_DOUBLE_EQ(case_weight_elements(p), 202113024.0);
  EXPECT_DOUBLE_EQ(case_flops(p), 1811939328.0);
  EXPECT_NEAR(default_case_timeout_s(p, false), 60 + 202113024.0 * 1.5e-6 + 1811939328.0 * 2e-9, 1e-6);
  EXPECT_NEAR(default_case_timeout_s(p, true), 60 + 202113024.0 * 1.5e-6 + 1811939328.0 * 1.02e-7, 1e-6);
  CaseSpec c;
  c.problem = p;
  c.source = "s.yaml:3";
  EXPECT_EQ(case_time_limit(c, true, std::nullopt).seconds, default_case_timeout_s(p, true));
  c.timeout_s = 42;
  EXPECT_EQ(case_time_limit(c, true, std::nullopt).seconds, 42);  // the case's timeout_s beats the default
  EXPECT_EQ(case_time_limit(c, true, 7.0).seconds, 7);            // and --case-timeout beats both
  EXPECT_EQ(case_time_limit(c, true, 7.0).why, "--case-timeout");
  // Memory: 4 GiB + 24 B per weight element + 64 B per activation + what the weight cache holds.
  const double act = 128.0 * (2 * 2048 + 8 * (2 * 128 + 2048) + 1 * 2 * 128);
  EXPECT_EQ(case_memory_limit(c, 1000).bytes, std::size_t(4.0 * (1 << 30) + 24 * 202113024.0 + 64 * act + 1000));
}

TEST(CaseLimits, TimeoutSKeyIsPositiveSecondsNamedOnError) {
  const Suite s = load_suite_text("suite: t\ncases:\n  - {hidden: 128, inter: 128, experts: 8, topk: 2, tokens: 3, timeout_s: 12.5}\n",
                                  "t.yaml");
  ASSERT_EQ(s.cases.size(), 1u);
  EXPECT_EQ(s.cases[0].timeout_s, std::optional<double>(12.5));
  for (const char* bad : {"0", "-3", "soon", "1e7", ".inf", ".nan"}) {  // (0, 10^6] seconds, finite
    try {
      load_suite_text(std::string("suite: t\ncases:\n  - {hidden: 128, inter: 128, experts: 8, topk: 2, tokens: 3, "
                                  "timeout_s: ") + bad + "}\n", "t.yaml");
      FAIL() << "timeout_s " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::bad_input);
      EXPECT_NE(std::string(e.what()).find("t.yaml:3"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("timeout_s"), std::string::npos) << e.what();
    }
  }
}

// A kernel's run() that throws: whatever it throws is that case's record, never an exception out of the pipeline
// (in process, an escaping exception would leave the test without a record).
class ThrowingKernel : public HostContractKernel {
 public:
  explicit ThrowingKernel(int what) : what_(what) {}
  RunInfo run(const ProblemSpec&, const Checkpoint&, const RoutingResult&, Tensor&) override {
    if (what_ == 0) throw 42;  // not a std::exception
    if (what_ == 1) throw std::bad_alloc();
    throw Error(ExitCode::case_failed, "kernel.cpp:9", "out_of_memory", "out of device memory: cudaMalloc failed", "");
  }

 private:
  int what_;
};

TEST(CasePipeline, WhateverAKernelThrowsBecomesThatCasesRecord) {
  const Suite s = load_suite_text("suite: t\ncases:\n  - {hidden: 128, inter: 128, experts: 8, topk: 2, tokens: 3}\n", "t.yaml");
  const DeviceDetection none;
  ThrowingKernel non_std(0), bad_alloc(1), device_oom(2);
  const CaseRecord a = execute_case(s.cases[0], non_std, none, {});
  EXPECT_EQ(a.status, Status::error);
  EXPECT_EQ(a.failed_check, Check::harness_error);
  EXPECT_NE(a.reason.find("not std::exception"), std::string::npos) << a.reason;
  const CaseRecord b = execute_case(s.cases[0], bad_alloc, none, {});
  EXPECT_EQ(b.status, Status::error);
  EXPECT_EQ(b.failed_check, Check::out_of_memory);
  const CaseRecord c = execute_case(s.cases[0], device_oom, none, {});
  EXPECT_EQ(c.status, Status::fail);  // out of device memory is a verdict on the case (GPU checks, gpu_check.hpp)
  EXPECT_EQ(c.failed_check, Check::out_of_memory);
  EXPECT_EQ(c.reason, "out_of_memory: out of device memory: cudaMalloc failed (kernel.cpp:9)");
}

TEST(JunitFromRecords, EscapesAndCountsAndSplitsCdata) {
  RunReport r;
  CaseRecord a = sample_record();
  CaseRecord b = a;
  b.status = Status::skip;
  b.reason = "declined";
  b.id = "other";
  r.cases = {a, b};
  const std::string x = to_junit_xml(r);
  EXPECT_NE(x.find(R"(<testsuites tests="2" failures="1" skipped="1")"), std::string::npos) << x;
  EXPECT_NE(x.find(R"(name="custom/T3/decode" file="cases/x.yaml" line="7")"), std::string::npos) << x;
  EXPECT_NE(x.find("&quot;quoted&quot; ]]&gt; &lt;tag&gt; &amp;   control"), std::string::npos) << x;
  EXPECT_EQ(x.find('\x01'), std::string::npos);
  EXPECT_NE(x.find("]]]]><![CDATA[>"), std::string::npos) << x;  // "]]>" inside CDATA split in two sections
  EXPECT_NE(x.find(R"(<skipped message="declined">)"), std::string::npos) << x;
  // Named by the ids as the reports spell them ('-' and ':' kept), the failure's message the verdict's own.
  EXPECT_NE(x.find(R"(<testsuite name="host-contract" tests="2")"), std::string::npos) << x;
  EXPECT_NE(x.find(R"(classname="host-contract")"), std::string::npos) << x;
  EXPECT_NE(x.find(R"(<failure message="FAIL min_cos: token 2)"), std::string::npos) << x;
  RunReport dashed;
  CaseRecord d = b;
  d.id = "custom-h256/tp1:x";
  dashed.cases = {d};
  EXPECT_NE(to_junit_xml(dashed).find(R"(<testcase name="custom-h256/tp1:x")"), std::string::npos) << to_junit_xml(dashed);
}

TEST(Wire, FloatsTravelBitForBitNaNPayloadsIncluded) {
  std::vector<float> v = {1.0f, -0.0f, 3.4028235e38f, 1e-45f};
  std::uint32_t sentinel = 0x7fc0dead;  // a NaN with a payload, as the output sentinel is
  float f;
  std::memcpy(&f, &sentinel, 4);
  v.push_back(f);
  const std::vector<float> w = wire::hex_floats(wire::floats_hex(v));
  ASSERT_EQ(w.size(), v.size());
  EXPECT_EQ(std::memcmp(w.data(), v.data(), v.size() * 4), 0);
}

// The worker builds its kernels from the config it is sent: the --dispatch A/B switches must reach it, or an A/B
// run would measure the default path twice.
TEST(Wire, ExecConfigRoundTripsWithTheDispatchSwitches) {
  ExecConfig c;
  c.suite_files = {"/s/a.yaml", "/s/b.yaml"};
  c.kernel_ids = {"host-contract", "gpu-fused-moe~none"};
  c.plugins = {"/p/libk.so"};
  c.host_budget = 1e10;
  c.dispatch.tokens_per_pass = 8;
  c.dispatch.grouped_mma = false;
  c.timing = false;
  c.reference_cache = "/cache";
  c.device.required = true;
  c.device.arch = "sm_90";
  c.device_lock = true;  // several workers (--jobs): the worker installs the device lock
  const ExecConfig d = wire::exec_config(nlohmann::json::parse(wire::to_json(c).dump()));
  EXPECT_EQ(d.suite_files, c.suite_files);
  EXPECT_EQ(d.kernel_ids, c.kernel_ids);
  EXPECT_EQ(d.plugins, c.plugins);
  EXPECT_EQ(d.host_budget, 1e10);
  EXPECT_EQ(d.dispatch.tokens_per_pass, 8);
  EXPECT_FALSE(d.dispatch.grouped_mma);
  EXPECT_TRUE(d.dispatch.decode_mma);
  EXPECT_FALSE(d.timing);
  EXPECT_EQ(d.reference_cache, "/cache");
  EXPECT_TRUE(d.device.required);
  EXPECT_EQ(d.device.arch, "sm_90");
  EXPECT_TRUE(d.device_lock);
}

TEST(Wire, RequestsAndDeviceDetectionRoundTrip) {
  CaseRequest r;
  r.case_index = 17; r.kernel_index = 3; r.seed = 18446744073709551615ull; r.rerun_probe = false; r.capture = true;
  const CaseRequest s = wire::case_request(wire::to_json(r));
  EXPECT_EQ(s.case_index, 17u);
  EXPECT_EQ(s.kernel_index, 3u);
  EXPECT_EQ(s.seed, r.seed);
  EXPECT_FALSE(s.rerun_probe);
  EXPECT_TRUE(s.linearity_probe);
  EXPECT_TRUE(s.capture);
  EXPECT_FALSE(s.corrupt_pristine);
  DeviceDetection d;
  d.runtime_present = true; d.device_count = 8; d.message = "NVIDIA H200 (sm_90)";
  DeviceInfo i;
  i.vendor = "nvidia"; i.name = "NVIDIA H200"; i.arch = "sm_90"; i.arch_raw = "sm_90"; i.compute_units = 132;
  i.memory_bytes = 150000000000ull; i.driver_version = "13000"; i.runtime_version = "13000";
  d.device = i;
  const DeviceDetection e = wire::device_detection(wire::to_json(d));
  ASSERT_TRUE(e.device);
  EXPECT_EQ(e.device->name, "NVIDIA H200");
  EXPECT_EQ(e.device->memory_bytes, 150000000000ull);
  EXPECT_EQ(e.device_count, 8);
  EXPECT_FALSE(wire::device_detection(wire::to_json(DeviceDetection{})).device);
  const nlohmann::json stats = wire::to_json(ExecStats{1, 2, 3, 4});
  EXPECT_EQ(stats, nlohmann::json::parse(R"({"reference_hits":1,"reference_misses":2,"weight_disk_hits":3,"weight_misses":4})"));
  const ExecStats back = wire::exec_stats(stats);
  EXPECT_EQ(back.reference_hits + 10 * back.reference_misses + 100 * back.weight_disk_hits + 1000 * back.weight_misses, 4321u);
}

}  // namespace
}  // namespace moe
