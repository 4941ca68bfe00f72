#include "harness/tuning/tuning_table.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>
#include <sstream>
#include <variant>

#include "fixtures/atomic_file.hpp"
#include "fixtures/error.hpp"
#include "fixtures/input_file.hpp"
#include "fixtures/input_limits.hpp"
#include "fixtures/strict_number.hpp"
#include "formats/weight_format.hpp"
#include "kernels/gpu/dispatch_options.hpp"

namespace moe {
namespace {

using Field = std::variant<std::string TuningRow::*, int TuningRow::*, std::int64_t TuningRow::*, double TuningRow::*>;
struct Column {
  const char* name;
  Field field;
  bool key;  // part of the row's key
};
// Every column, in file order.
const Column kColumns[] = {
    {"gfx", &TuningRow::gfx, true}, {"cu_num", &TuningRow::cu_num, true}, {"token", &TuningRow::token, true},
    {"model_dim", &TuningRow::model_dim, true}, {"inter_dim", &TuningRow::inter_dim, true},
    {"expert", &TuningRow::expert, true}, {"topk", &TuningRow::topk, true}, {"act_type", &TuningRow::act_type, true},
    {"dtype", &TuningRow::dtype, true}, {"q_dtype_a", &TuningRow::q_dtype_a, true},
    {"q_dtype_w", &TuningRow::q_dtype_w, true}, {"q_type", &TuningRow::q_type, true},
    {"use_g1u1", &TuningRow::use_g1u1, true}, {"doweight_stage1", &TuningRow::doweight_stage1, true},
    {"shape", &TuningRow::shape, true}, {"block_m", &TuningRow::block_m, false},
    {"ksplit", &TuningRow::ksplit, false}, {"us", &TuningRow::us, false}, {"err", &TuningRow::err, false},
    {"kernel_name", &TuningRow::kernel_name, false}, {"dispatch", &TuningRow::dispatch, false},
    {"runner_up", &TuningRow::runner_up, false}, {"runner_up_us", &TuningRow::runner_up_us, false},
    {"runner_up_err", &TuningRow::runner_up_err, false}, {"kernel_id", &TuningRow::kernel_id, false},
    {"kernel_version", &TuningRow::kernel_version, false}, {"harness_commit", &TuningRow::harness_commit, false},
    {"device_name", &TuningRow::device_name, false}, {"driver", &TuningRow::driver, false},
    {"date", &TuningRow::date, false}, {"seed", &TuningRow::seed, false}, {"case_id", &TuningRow::case_id, false}};

const char* kFix = "write the table with `moe-harness tune` (docs/tuning.md lists the columns)";

// RFC 4180 cells: a cell holding a comma or a quote is quoted, quotes doubled (a dispatch choice lists switches
// separated by commas).
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') cells.back() += '"', ++i;
      else if (ch == '"') quoted = false;
      else cells.back() += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      cells.emplace_back();
    } else if (ch != '\r') {
      cells.back() += ch;
    }
  }
  return cells;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string q = "\"";
  for (char ch : text) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string cell_text(const TuningRow& r, const Field& f) {
  return std::visit(
      [&](auto m) -> std::string {
        const auto& v = r.*m;
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>) return v;
        else if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>) return fmt::format("{:.6g}", v);
        else return std::to_string(v);
      },
      f);
}

// A number cell, read strictly (fixtures/strict_number.hpp) within its type; its sign, size and finiteness are the
// checks' (a negative or NaN time is a finding, table_checks.hpp).
NumberProblem parse_cell(const std::string& text, double& v) { return parse_measurement(text, v); }
template <class T>
NumberProblem parse_cell(const std::string& text, T& v) {
  std::int64_t w = 0;
  NumberProblem p = parse_whole(text, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), w);
  if (!p) v = T(w);
  return p;
}

void set_cell(TuningRow& r, const Field& f, const std::string& text, const std::string& where, const char* column) {
  std::visit(
      [&](auto m) {
        auto& v = r.*m;
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          v = text;
        } else {
          if (text.empty()) return;  // missing: 0, which the checks refuse where a value is required
          if (const NumberProblem p = parse_cell(text, v)) throw_bad_input(where, column, p.problem, p.fix);
        }
      },
      f);
}

template <class Pred>
bool columns_equal(const TuningRow& a, const TuningRow& b, Pred take) {
  for (const Column& c : kColumns)
    if (take(c) && cell_text(a, c.field) != cell_text(b, c.field)) return false;
  return true;
}

std::string q_type_of(WeightFormat w) {
  const WeightFormatInfo& f = weight_format_info(w);
  if (is_mx(f)) return fmt::format("mx{}", f.block_k);
  if (f.scale == ScaleKind::none) return "none";
  if (f.block_rows == 0 && f.block_k == 0) return "per_tensor";
  if (f.block_k == 0) return "per_channel";
  return fmt::format("block_{}x{}", f.block_rows, f.block_k);
}

// What makes a row usable by every reader, checked as the table is read (exit 2 before any work): its dispatch
// choice parses (a garbage choice would make every case it covers an error), and its shape key is the one its
// case_id gives (key_of(): the id with its /T<token>/ part as /T*/), so the lookup can reach the row.
// A choice is what `tune` writes: each switch at most once, no empty item (the command line's "a later item wins"
// would let a row say two things), and none on a host row (every kernel that runs on the host has one path; a choice
// there makes each case it covers an error at run).
void check_row(const TuningRow& r, const std::string& where) {
  const std::string fix = "use comma-separated KEY=VALUE items, each one of " + gpu::dispatch_option_spellings() +
                          " and each switch once (or leave it empty)";
  const std::vector<std::string> items = gpu::split_dispatch_choice(r.dispatch);
  try {
    (void)gpu::parse_dispatch_options(items);
  } catch (const Error& e) {
    throw_bad_input(where, "dispatch", e.problem(), fix);
  }
  if (!r.dispatch.empty() && r.dispatch.back() == ',')
    throw_bad_input(where, "dispatch", "'" + r.dispatch + "' ends in an empty item", fix);
  for (std::size_t i = 0; i < items.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (items[i].substr(0, items[i].find('=')) == items[k].substr(0, items[k].find('=')))
        throw_bad_input(where, "dispatch", "'" + r.dispatch + "' sets " + items[i].substr(0, items[i].find('=')) +
                                               " twice", fix);
  if (r.gfx == "host" && !r.dispatch.empty())
    throw_bad_input(where, "dispatch", "'" + r.dispatch + "' on a host row: the kernels that run on the host have "
                                       "one path and no dispatch choice",
                    "leave the dispatch cell of a gfx host row empty (as `moe-harness tune` writes it)");
  std::uint64_t seed = 0;
  if (const NumberProblem p = r.seed.empty() ? NumberProblem{} : parse_unsigned64(r.seed, seed))
    throw_bad_input(where, "seed", p.problem, p.fix + " (or leave it empty for the case's own seed)");
  if (r.case_id.empty()) return;
  std::string shape = r.case_id;
  const std::string tok = fmt::format("/T{}/", r.token);
  if (const auto i = shape.find(tok); i != std::string::npos) shape.replace(i, tok.size(), "/T*/");
  if (r.shape != shape)
    throw_bad_input(where, "shape",
                    "'" + r.shape + "' is not the shape key of case_id '" + r.case_id + "' at token " +
                        std::to_string(r.token) + " ('" + shape + "'): no case could ever look this row up",
                    "write the shape as `moe-harness tune` does: the case id with /T<token>/ as /T*/");
}

}  // namespace

std::string tuning_header() {
  std::string h;
  for (const Column& c : kColumns) h += (h.empty() ? "" : ",") + std::string(c.name);
  return h;
}

TuningTable read_tuning_table(const std::string& path) {
  TuningTable t{path, {}};
  std::istringstream in(read_input_file(path, "tuning table", kSuiteFileLimit));
  std::string line;
  int n = 0;
  std::vector<int> at;  // file column of each kColumns entry
  std::size_t header_cells = 0;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty() || line == "\r") continue;
    const std::string where = fmt::format("{}:{}", path, n);
    if (n == 1) refuse_byte_order_mark(line, where);
    const auto cells = split_csv(line);
    if (at.empty()) {
      refuse_duplicate_columns(cells, where);
      for (const Column& c : kColumns) {
        int found = -1;
        for (std::size_t i = 0; i < cells.size(); ++i) if (cells[i] == c.name) found = int(i);
        if (found < 0) throw_bad_input(where, c.name, "the header has no column '" + std::string(c.name) + "'", kFix);
        at.push_back(found);
      }
      header_cells = cells.size();
      header = cells;
      continue;
    }
    if (cells.size() != header_cells)
      throw_bad_input(where, "row", fmt::format("{} cells, the header has {}", cells.size(), header_cells), kFix);
    refuse_non_number_cells(header, cells, where, false);
    TuningRow r;
    r.line = n;
    for (std::size_t i = 0; i < std::size(kColumns); ++i)
      set_cell(r, kColumns[i].field, cells[std::size_t(at[i])], where, kColumns[i].name);
    check_row(r, where);
    t.rows.push_back(std::move(r));
  }
  if (at.empty()) throw_bad_input(path, "header", "the file is empty", kFix);
  return t;
}

void write_tuning_table(const TuningTable& t, const std::string& path) {
  // The optional columns `_tag` and `_override` (table_file.hpp) are written when a row carries one, so a table
  // rewritten by `tune --merge-into` keeps them.
  bool extra = false;
  for (const TuningRow& r : t.rows) extra = extra || !r.tag.empty() || !r.override_ack.empty();
  write_file_atomically(path, [&](std::ostream& os) {
    os << tuning_header() << (extra ? ",_tag,_override" : "") << "\n";
    for (const TuningRow& r : t.rows)
      os << tuning_csv_line(r) << (extra ? "," + csv_cell(r.tag) + "," + csv_cell(r.override_ack) : "") << "\n";
  });
}

std::vector<std::string> tuning_csv_cells(const std::string& line) { return split_csv(line); }

std::optional<std::uint64_t> row_seed(const TuningRow& r) {
  std::uint64_t seed = 0;
  if (r.seed.empty() || parse_unsigned64(r.seed, seed)) return std::nullopt;
  return seed;
}

void refuse_byte_order_mark(const std::string& first_line, const std::string& where) {
  if (first_line.rfind("\xEF\xBB\xBF", 0) == 0)
    throw_bad_input(where, "header", "the file starts with a UTF-8 byte order mark (BOM, bytes EF BB BF)",
                    "save the table as UTF-8 without a BOM (as `moe-harness tune` writes it)");
}

void refuse_duplicate_columns(const std::vector<std::string>& header, const std::string& where) {
  for (std::size_t i = 0; i < header.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (header[i] == header[k]) {
        if (header[i].empty())  // two unnamed columns: neither can be told from the other
          throw_bad_input(where, "header", fmt::format("the header has two unnamed (empty) columns (cells {} and {})",
                                                       k + 1, i + 1),
                          "name every column, each once (or remove the empty ones)");
        throw_bad_input(where, header[i],
                        fmt::format("the header names column '{}' twice (cells {} and {})", header[i], k + 1, i + 1),
                        "keep one column of each name");
      }
}

void refuse_non_number_cells(const std::vector<std::string>& header, const std::vector<std::string>& cells,
                             const std::string& where, bool percent) {
  static const char* const kWhole[] = {"cu_num", "token", "model_dim", "inter_dim", "expert", "topk",
                                       "use_g1u1", "doweight_stage1", "block_m", "ksplit"};
  static const char* const kReal[] = {"us", "err", "err1", "err2", "runner_up_us", "runner_up_err"};
  const std::string fix = "write the cell as a plain decimal number, or leave it empty (docs/tuning.md \"The table\")";
  for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) {
    const std::string& h = header[i];
    std::string_view c = cells[i];
    if (c.empty()) continue;
    for (const char* w : kWhole) {
      std::int64_t v = 0;
      if (h == w)
        if (const NumberProblem p = parse_whole(c, std::numeric_limits<std::int64_t>::min(),
                                                std::numeric_limits<std::int64_t>::max(), v))
          throw_bad_input(where, h, p.problem, p.fix);
    }
    for (const char* r : kReal) {
      if (h != r) continue;
      if (percent && c.back() == '%') c.remove_suffix(1);
      double v = 0;
      if (const NumberProblem p = parse_measurement(c, v)) throw_bad_input(where, h, p.problem, p.fix + "; " + fix);
    }
  }
}

std::string tuning_csv_line(const TuningRow& r) {
  std::string line;
  for (const Column& c : kColumns) line += (line.empty() ? "" : ",") + csv_cell(cell_text(r, c.field));
  return line;
}

TuningRow key_of(const CaseSpec& c, const std::string& gfx, int cu_num) {
  const ProblemSpec& p = c.problem;
  TuningRow r;
  r.gfx = gfx;
  r.cu_num = cu_num;
  r.token = p.tokens;
  r.model_dim = p.hidden;
  r.inter_dim = p.local_inter();
  r.expert = p.experts;
  r.topk = p.topk;
  r.act_type = std::string(name(p.activation));
  r.dtype = std::string(dtype_name(p.input_dtype));
  r.q_dtype_a = std::string(name(p.quant.act));
  r.q_dtype_w = std::string(name(p.quant.weight));
  r.q_type = q_type_of(p.quant.weight);
  r.use_g1u1 = 1;  // every activation of the contract is gated
  r.doweight_stage1 = p.router_weight_on == RouterWeightOn::input ? 1 : 0;
  const std::string tok = fmt::format("/T{}/", p.tokens);
  r.shape = c.id;
  if (const auto i = r.shape.find(tok); i != std::string::npos) r.shape.replace(i, tok.size(), "/T*/");
  r.ksplit = p.split_k;
  r.case_id = c.id;
  return r;
}

bool same_key(const TuningRow& a, const TuningRow& b) {
  return columns_equal(a, b, [](const Column& c) { return c.key; });
}
bool same_shape(const TuningRow& a, const TuningRow& b) {
  return columns_equal(a, b, [](const Column& c) { return c.key && std::string(c.name) != "token"; });
}

std::string key_cells(const TuningRow& r) {
  std::string k;
  for (const Column& c : kColumns)
    if (c.key) k += cell_text(r, c.field) + '\x1f';
  return k;
}
std::string shape_cells(const TuningRow& r) {
  std::string k;
  for (const Column& c : kColumns)
    if (c.key && std::string(c.name) != "token") k += cell_text(r, c.field) + '\x1f';
  return k;
}

std::optional<Lookup> lookup(const TuningTable& t, const TuningRow& key) {
  const TuningRow *pow2 = nullptr, *below = nullptr, *smallest = nullptr;
  std::int64_t p2 = 1;
  while (p2 * 2 <= key.token) p2 *= 2;
  for (const TuningRow& r : t.rows) {
    if (!same_shape(r, key)) continue;
    if (r.token == key.token) return Lookup{&r, true, "exact"};
    if (r.token == p2) pow2 = &r;
    if (r.token < key.token && (!below || r.token > below->token)) below = &r;
    if (!smallest || r.token < smallest->token) smallest = &r;
  }
  if (pow2) return Lookup{pow2, false, "power of two below"};
  if (below) return Lookup{below, false, "coarse tier below"};
  if (smallest) return Lookup{smallest, false, "smallest tier"};
  return std::nullopt;
}

}  // namespace moe
