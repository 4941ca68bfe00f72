#include "harness/batch/case_export.hpp"

#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <new>
#include <unistd.h>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "fixtures/safetensors.hpp"
#include "harness/case/case_json.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/run/output_guard.hpp"
#include "harness/run/provenance.hpp"
#include "harness/pipeline/rounding_resolution.hpp"
#include "harness/run/runner.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "kernels/external/external_output_kernel.hpp"  // kFixtureFingerprintKey, fingerprint_hex

namespace moe {

ExportEntry export_case(const CaseSpec& c, const std::filesystem::path& dir, WeightCache* weights) {
  const ProblemSpec& p = c.problem;
  // The references under the case's own contract: what `judge` uses for a program that declares none. A floor that
  // zeroes them is the case's bad input (CaseInputError) named at the case's line, as `run` names it: one that
  // zeroes every input before the fixture is generated, one that zeroes this fixture's reference once computed.
  const std::string at = c.source.empty() ? "case " + c.id : c.source;
  const ResolvedContract rc = resolve_contract(c, p, {});
  refuse_zeroing_floor(rc, at, at, "rounding_contract");  // no contract declared: the case's own key at `at`
  Checkpoint ck = pristine_checkpoint(c, p, weights);
  const std::uint64_t fingerprint = ck.fingerprint();
  const ReferenceSet refs = [&] {
    try {
      return compute_references(rc, ck);
    } catch (const CaseInputError& e) {
      if (e.where() != "case") throw;
      throw CaseInputError(at, e.key(), e.problem(), e.fix());
    }
  }();
  const RoutingResult& r = refs.routing;
  Tensor ids("topk_ids", DType::i32, {p.tokens, r.k}), wts("topk_weights", DType::f32, {p.tokens, r.k});
  std::copy(r.ids.begin(), r.ids.end(), ids.span<std::int32_t>().begin());
  std::copy(r.weights.begin(), r.weights.end(), wts.span<float>().begin());
  std::vector<const Tensor*> fixture;
  for (const Tensor* t : ck.tensors())
    if (t->name() != "topk_ids" && t->name() != "topk_weights") fixture.push_back(t);
  fixture.push_back(&ids);
  fixture.push_back(&wts);
  const std::map<std::string, std::string> meta = {
      {"moe.case_id", c.id}, {kFixtureFingerprintKey, fingerprint_hex(fingerprint)},
      {"moe.layout.w13", std::string(name(p.layout))},
      {"moe.layout.w13_rows", "[E_local, 2*I_local, H]; K (hidden) last"}, {"moe.layout.w2", "[E_local, H, I_local]; K (inter) last"},
      {"moe.weight_format", std::string(name(p.quant.weight))}, {"moe.fp8_flavor", std::string(name(p.quant.flavor))},
      {"moe.e2m1_packing", "even element in the low nibble; last dimension halved"},
      {"moe.topk", "reference routing (global expert ids; ties to the lower index)"}};
  ExportEntry e;
  e.id = c.id;
  e.exported = true;
  e.fixture_fingerprint = fingerprint;
  e.reference_hash = reference_hash(refs);
  e.reference_key = ReferenceCache::key(c, rc.record.effective, fingerprint);
  std::filesystem::create_directories(dir);
  write_safetensors(dir / "fixture.safetensors", fixture, meta);
  write_reference_file(dir / "reference.safetensors", refs, p, e.reference_key, {{"moe.case_id", c.id}});
  write_file_atomically(dir / "case.json", case_to_json_text(c));
  if (c.tier != Tier::exact && weights) weights->give_back(p, std::move(ck));  // nothing wrote into it
  return e;
}

namespace {
// Leftovers of an export that was killed: its temporary case directories.
void remove_stale_case_dirs(const std::filesystem::path& out) {
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(out, ec))
    if (d.path().filename().string().rfind(".export-tmp.", 0) == 0) std::filesystem::remove_all(d.path(), ec);
}
}  // namespace

int export_suite(const SuiteExportOptions& opt) {
  OutputGuard().input(resolve_suite(opt.suite), "--suite").output_dir(opt.out, "--out", {"index.json"}).check();
  const Suite suite = load_suite_file(resolve_suite(opt.suite));
  std::vector<const CaseSpec*> cases;
  std::map<std::string, std::string> names;  // directory name -> case id
  for (const CaseSpec& c : suite.cases) {
    if (!case_selected(opt.filters, c.id)) continue;
    const auto [it, fresh] = names.emplace(case_dir_name(c.id), c.id);
    if (!fresh)
      throw_bad_input(suite.file, "variant",
                      "cases '" + it->second + "' and '" + c.id + "' would share the export directory " + it->first,
                      "give one of the cases another `variant`, or export them separately");
    cases.push_back(&c);
  }
  if (cases.empty()) {
    std::fprintf(stderr, "moe-harness: nothing exported (exit 4): the filters selected no case of suite %s (%zu cases in %s)\n",
                 suite.name.c_str(), suite.cases.size(), suite.file.c_str());
    return int(ExitCode::nothing_checked);
  }
  std::filesystem::create_directories(opt.out);
  const std::filesystem::path index_file = opt.out / kExportIndexFile;
  std::filesystem::remove(index_file);  // until the new one is whole, the directory has no index: judge refuses it
  remove_stale_case_dirs(opt.out);
  ExportIndex index;
  index.suite = opt.suite;
  index.suite_file = std::filesystem::absolute(suite.file).string();
  index.suite_hash = suite.file_hash;
  index.filters = opt.filters;
  index.harness = harness_build_stamp();
  index.reference_version = reference_version();
  WeightCache weights;
  int not_built = 0, bad_input = 0;
  // A stop signal: the case in flight is exported, the rest are listed as not exported with the reason (so judge
  // --dir makes them errors, never a pass), the index written, and the exit is 128 + N (stop_signal.hpp).
  const StopSignals stop("stopping after the case in flight");
  for (const CaseSpec* c : cases) {
    if (stop_requested()) {
      ExportEntry e;
      e.id = c->id;
      e.reason = "interrupted by " + stop_signal_name() + " before this case was exported; export the suite again";
      e.failed_check = Check::harness_error;
      index.cases.push_back(std::move(e));
      ++not_built;
      continue;
    }
    const std::string name = case_dir_name(c->id);
    const std::filesystem::path tmp = opt.out / fmt::format(".export-tmp.{}.{}", ::getpid(), name),
                                final_dir = opt.out / name;
    ExportEntry e;
    try {
      e = export_case(*c, tmp, &weights);
      std::filesystem::remove_all(final_dir);
      std::filesystem::rename(tmp, final_dir);
      e.dir = name;
    } catch (...) {
      CaseRecord why;
      record_exception(why);  // the words `run` gives the same failure
      std::error_code ec;
      std::filesystem::remove_all(tmp, ec);
      e = ExportEntry{};
      e.id = c->id;
      e.reason = why.reason;
      e.failed_check = why.failed_check == Check::bad_input ? Check::bad_input : Check::harness_error;
      ++not_built;
      bad_input += e.failed_check == Check::bad_input;
      std::fprintf(stderr, "moe-harness: not exported%s: %s: %s\n",
                   e.failed_check == Check::bad_input ? " (bad input)" : "", c->id.c_str(), why.reason.c_str());
    }
    index.cases.push_back(std::move(e));
  }
  write_file_atomically(index_file, export_index_json(index));
  std::printf("exported %zu of %zu case(s) to %s (index: %s)\n", cases.size() - not_built, cases.size(),
              opt.out.string().c_str(), index_file.string().c_str());
  if (stop_requested()) {
    std::printf("moe-harness: interrupted by %s: the cases not exported are listed in the index with the reason\n",
                stop_signal_name().c_str());
    std::fflush(stdout);
    return exit_code_for_stop();
  }
  // `run`'s order (harness/run/runner.cpp): a case's bad input (2) before the cases the host could not build (3).
  if (bad_input) return int(ExitCode::bad_input);
  return not_built ? int(ExitCode::harness_error) : 0;
}

}  // namespace moe
