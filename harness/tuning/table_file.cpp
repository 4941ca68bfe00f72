#include "harness/tuning/table_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>
#include <vector>

#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "fixtures/input_limits.hpp"
#include "fixtures/strict_number.hpp"

namespace moe {
namespace {

const char* kTableFileFix = "give a table `moe-harness tune` wrote or one in AITER's tuned fused-MoE columns (docs/tuning.md)";

// Each non-empty line of `path`'s text with its 1-based number; a file starting with a UTF-8 byte order mark is
// refused (refuse_byte_order_mark), as read_tuning_table refuses it.
std::vector<std::pair<int, std::vector<std::string>>> csv_lines(const std::string& path, const std::string& text) {
  std::istringstream in(text);
  std::vector<std::pair<int, std::vector<std::string>>> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (n == 1) refuse_byte_order_mark(line, path + ":1");
    if (line.empty() || line == "\r") continue;
    out.emplace_back(n, tuning_csv_cells(line));
  }
  return out;
}

int column(const std::vector<std::string>& header, const char* name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return int(i);
  return -1;
}

// The optional columns of this harness's format, which read_tuning_table does not know.
void read_optional_columns(TuningTable& t, const std::vector<std::pair<int, std::vector<std::string>>>& lines) {
  const auto& header = lines.front().second;
  const int tag = column(header, "_tag"), ack = column(header, "_override");
  std::map<int, const std::vector<std::string>*> by_line;
  for (const auto& [n, cells] : lines) by_line[n] = &cells;
  for (TuningRow& r : t.rows) {
    r.file = t.file;
    const auto& cells = *by_line.at(r.line);
    if (tag >= 0) r.tag = cells[std::size_t(tag)];
    if (ack >= 0) r.override_ack = cells[std::size_t(ack)];
  }
}

struct AiterRow {
  const std::vector<std::string>& cells;
  const std::vector<std::string>& header;
  std::string where;
  std::string text(const char* name) const {
    const int i = column(header, name);
    return i < 0 ? "" : cells[std::size_t(i)];
  }
  // A whole number of the field's type T (no wrap: cu_num 2^64 is out of range, not 0).
  template <class T>
  T integer(const char* name) const {
    const std::string s = text(name);
    std::int64_t v = 0;
    if (s.empty()) return 0;
    if (const NumberProblem p = parse_whole(s, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), v))
      throw_bad_input(where, name, p.problem, p.fix);
    return T(v);
  }
  // A number; a trailing '%' (AITER's err1, err2) divides it by 100.
  double real(const char* name) const {
    std::string s = text(name);
    if (s.empty()) return 0;
    const bool percent = s.back() == '%';
    if (percent) s.pop_back();
    double v = 0;
    if (const NumberProblem p = parse_measurement(s, v)) throw_bad_input(where, name, p.problem, p.fix);
    return percent ? v / 100 : v;
  }
};

const char* const kAiterRequired[] = {"gfx", "cu_num", "token", "model_dim", "inter_dim", "expert", "topk",
                                      "act_type", "dtype", "q_dtype_a", "q_dtype_w", "q_type", "use_g1u1",
                                      "doweight_stage1", "us"};

TuningTable read_aiter(const std::string& path, const std::vector<std::pair<int, std::vector<std::string>>>& lines) {
  TuningTable t{path, {}};
  t.aiter = true;
  const auto& [header_line, header] = lines.front();
  for (const char* c : kAiterRequired)
    if (column(header, c) < 0)
      throw_bad_input(fmt::format("{}:{}", path, header_line), c,
                      fmt::format("the header has neither this harness's columns (no 'shape') nor AITER's (no '{}')", c),
                      kTableFileFix);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto& [n, cells] = lines[i];
    const std::string where = fmt::format("{}:{}", path, n);
    if (cells.size() != header.size())
      throw_bad_input(where, "row", fmt::format("{} cells, the header has {}", cells.size(), header.size()), kTableFileFix);
    refuse_non_number_cells(header, cells, where, true);
    const AiterRow a{cells, header, where};
    TuningRow r;
    r.line = n;
    r.file = path;
    r.gfx = a.text("gfx");
    r.cu_num = a.integer<int>("cu_num");
    r.token = a.integer<std::int64_t>("token");
    r.model_dim = a.integer<std::int64_t>("model_dim");
    r.inter_dim = a.integer<std::int64_t>("inter_dim");
    r.expert = a.integer<std::int64_t>("expert");
    r.topk = a.integer<int>("topk");
    r.act_type = a.text("act_type");
    r.dtype = a.text("dtype");
    r.q_dtype_a = a.text("q_dtype_a");
    r.q_dtype_w = a.text("q_dtype_w");
    r.q_type = a.text("q_type");
    r.use_g1u1 = a.integer<int>("use_g1u1");
    r.doweight_stage1 = a.integer<int>("doweight_stage1");
    r.block_m = a.integer<int>("block_m");
    r.ksplit = a.integer<int>("ksplit");
    r.us = a.real("us");
    r.err = column(header, "err") >= 0 ? a.real("err") : std::max(a.real("err1"), a.real("err2"));
    r.kernel_name = column(header, "kernel_name") >= 0 ? a.text("kernel_name") : a.text("kernelName1");
    if (const std::string k2 = a.text("kernelName2"); !k2.empty() && k2 != "Null") r.kernel_name += "+" + k2;
    r.tag = a.text("_tag");
    r.override_ack = a.text("_override");
    t.rows.push_back(std::move(r));
  }
  return t;
}

}  // namespace

TuningTable read_table_file(const std::string& path) {
  const auto lines = csv_lines(path, read_input_file(path, "tuning table", kSuiteFileLimit));
  if (lines.empty()) throw_bad_input(path, "header", "the file is empty", kTableFileFix);
  refuse_duplicate_columns(lines.front().second, fmt::format("{}:{}", path, lines.front().first));
  if (column(lines.front().second, "shape") < 0) return read_aiter(path, lines);
  TuningTable t = read_tuning_table(path);
  read_optional_columns(t, lines);
  return t;
}

}  // namespace moe
