#include "harness/tuning/table_merge.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "fixtures/input_limits.hpp"
#include "harness/isolation/stop_signal.hpp"
#include "harness/tuning/table_checks.hpp"
#include "harness/tuning/table_file.hpp"

namespace moe {

std::string partial_path(const std::string& table) { return table + ".partial"; }

std::vector<TuningRow> read_partial(const std::string& path) {
  if (!std::filesystem::exists(path)) return {};
  std::string text = read_input_file(path, "partial tune output", kSuiteFileLimit);
  const std::size_t last = text.rfind('\n');
  text.erase(last == std::string::npos ? 0 : last + 1);  // a line without its newline was cut short
  const std::string whole = path + ".whole";
  {
    std::ofstream(whole, std::ios::binary | std::ios::trunc) << text;
  }
  std::vector<TuningRow> rows;
  try {
    rows = read_tuning_table(whole).rows;
  } catch (...) {
    std::filesystem::remove(whole);
    throw;
  }
  std::filesystem::remove(whole);
  return rows;
}

PartialWriter::PartialWriter(const std::string& path) : path_(path) {
  const bool fresh = !std::filesystem::exists(path) || std::filesystem::file_size(path) == 0;
  out_.open(path, std::ios::binary | std::ios::app);
  if (!out_) throw_bad_input(path, "--merge-into", "cannot write the partial output beside the table",
                             "make the table's directory writable");
  if (fresh) out_ << tuning_header() << "\n" << std::flush;
}

void PartialWriter::add(const TuningRow& r) { out_ << tuning_csv_line(r) + "\n" << std::flush; }

MergeOutcome merge_tuned_rows(const TuningTable& old, const std::vector<TuningRow>& fresh,
                              const std::set<std::string>& tuned_cases, const std::string& gfx, int cu_num) {
  MergeOutcome m;
  m.merged.file = old.file;
  std::vector<bool> used(fresh.size(), false);
  for (const TuningRow& r : old.rows) {
    const bool replaced = r.tag.empty() && r.gfx == gfx && r.cu_num == cu_num && tuned_cases.count(r.case_id);
    if (!replaced) {
      m.merged.rows.push_back(r);
      continue;
    }
    std::size_t i = 0;
    while (i < fresh.size() && !same_key(fresh[i], r)) ++i;
    if (i == fresh.size()) {
      m.refused.push_back(fmt::format("{}:{}: the row of case {} at token {} has no row in the new set: the merge "
                                      "would drop a tuned key",
                                      old.file, r.line, r.case_id, r.token));
      continue;
    }
    TuningRow n = fresh[i];
    n.line = r.line;
    n.override_ack = r.override_ack;
    m.merged.rows.push_back(std::move(n));
    used[i] = true;
  }
  for (std::size_t i = 0; i < fresh.size(); ++i)
    if (!used[i]) {
      m.merged.rows.push_back(fresh[i]);
      m.merged.rows.back().line = 0;
    }
  // Lines as the merged file will have them, so that the static findings name them.
  for (std::size_t i = 0; i < m.merged.rows.size(); ++i) m.merged.rows[i].line = int(i) + 2;
  for (const TableFinding& f : static_table_findings(m.merged))
    if (f.defect) m.refused.push_back(fmt::format("merged {}:{}: {}", old.file, f.line, f.message));
  return m;
}

MergeInto tune_merge_into(TuneOptions o, const std::string& table) {
  MergeInto out;
  const TuningTable old = read_table_file(table);
  if (old.aiter)
    throw_bad_input(table, "--merge-into", "an AITER table: tune writes this harness's columns",
                    "merge into a table `moe-harness tune` wrote");
  const std::string partial = partial_path(table);
  o.done = read_partial(partial);
  if (!o.done.empty())
    out.lines.push_back(fmt::format("resuming from {}: {} row(s) tuned before", partial, o.done.size()));
  PartialWriter writer(partial);
  const auto observer = o.on_row;
  o.on_row = [&](const TuningRow& r) {
    writer.add(r);
    if (observer) observer(r);
  };
  const TuneResult r = tune(o);
  out.lines.insert(out.lines.end(), r.notes.begin(), r.notes.end());
  if (!r.interrupted.empty()) {
    out.lines.push_back(fmt::format("interrupted by {}: {} not merged; the rows tuned are in {} (tune --merge-into "
                                    "again resumes from them)", r.interrupted, table, partial));
    out.exit_code = exit_code_for_stop();
    return out;
  }
  if (r.failed_cases > 0) {
    out.lines.push_back(fmt::format("{} case(s) without a passing variant: {} not merged; the rows tuned are in {}",
                                    r.failed_cases, table, partial));
    out.exit_code = 1;
    return out;
  }
  const MergeOutcome m = merge_tuned_rows(old, r.table.rows, r.tuned_cases, r.gfx, r.cu_num);
  for (const std::string& why : m.refused) out.lines.push_back("merge refused: " + why);
  if (!m.refused.empty()) {
    out.lines.push_back(fmt::format("{} left as it was; the new rows are in {}", table, partial));
    out.exit_code = 1;
    return out;
  }
  write_tuning_table(m.merged, table);
  std::filesystem::remove(partial);
  out.lines.push_back(fmt::format("{} row(s) merged into {} ({} row(s) now)", r.table.rows.size(), table,
                                  m.merged.rows.size()));
  return out;
}

}  // namespace moe
