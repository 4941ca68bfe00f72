#include "harness/tuning/table_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "fixtures/error.hpp"
#include "fixtures/strict_number.hpp"
#include "harness/tuning/table_file.hpp"

namespace moe {
namespace {

std::string key_text(const TuningRow& r) {
  return fmt::format("gfx {}, cu_num {}, token {}, model_dim {}, inter_dim {}, expert {}, topk {}, {} {} {}/{} {}{}",
                     r.gfx, r.cu_num, r.token, r.model_dim, r.inter_dim, r.expert, r.topk, r.act_type, r.dtype,
                     r.q_dtype_a, r.q_dtype_w, r.q_type, r.shape.empty() ? "" : ", shape " + r.shape);
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

// The path with its directories and links resolved (as far as they exist), to compare two spellings of one file.
std::string resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path a = std::filesystem::absolute(path, ec);
  if (ec || path.empty()) return path;
  const std::filesystem::path p = std::filesystem::weakly_canonical(a, ec);
  return ec ? a.lexically_normal().string() : p.string();
}

// The tables an --acknowledge-override FILE:LINE names, and its line: FILE resolves (as a path) to tables of the set,
// else a FILE without a directory names the one table of that file name. A file name shared by tables at different
// paths is ambiguous: bad input naming both, so an acknowledgement never covers a row it did not name.
std::pair<std::vector<std::size_t>, int> acknowledged_rows(const std::string& ack, const std::vector<TuningTable>& ts) {
  const std::size_t colon = ack.rfind(':');
  std::int64_t line = 0;
  const NumberProblem p = colon == std::string::npos
                              ? NumberProblem{"'" + ack + "' has no ':LINE'", "write FILE:LINE of the overriding row"}
                              : parse_whole(std::string_view(ack).substr(colon + 1), 1, 1 << 30, line);
  if (p)
    throw_bad_input("command line", "--acknowledge-override", "'" + ack + "': " + p.problem,
                    "write FILE:LINE of the overriding row, e.g. overlay.csv:2 (" + p.fix + ")");
  const std::string file = ack.substr(0, colon);
  std::vector<std::size_t> by_path, by_name;
  for (std::size_t i = 0; i < ts.size(); ++i) {
    if (resolved(ts[i].file) == resolved(file)) by_path.push_back(i);
    if (file.find('/') == std::string::npos && file_name(ts[i].file) == file) by_name.push_back(i);
  }
  if (!by_path.empty()) return {by_path, int(line)};
  for (const std::size_t i : by_name)
    if (resolved(ts[i].file) != resolved(ts[by_name.front()].file))
      throw_bad_input("command line", "--acknowledge-override",
                      fmt::format("'{}' is ambiguous: file name {} names both {} and {}", ack, file,
                                  ts[by_name.front()].file, ts[i].file),
                      fmt::format("name the table by its path, e.g. --acknowledge-override {}:{}", ts[i].file, line));
  return {by_name, int(line)};
}

}  // namespace

std::string TableSet::where(RowRef r) const { return fmt::format("{}:{}", tables[r.table].file, row(r).line); }

int TableSet::defects() const {
  int n = 0;
  for (const SetFinding& f : findings) n += f.defect;
  return n;
}

std::vector<std::string> split_table_paths(const std::vector<std::string>& arguments, const std::string& option) {
  std::vector<std::string> out;
  for (const std::string& a : arguments) {
    std::size_t start = 0;
    while (start <= a.size()) {
      const std::size_t end = std::min(a.find(':', start), a.size());
      if (end == start)
        throw_bad_input("command line", option,
                        "'" + a + "' has an empty element" + (a.empty() ? "" : fmt::format(" at byte {}", start)) +
                            ": a list of tables has one path between each pair of ':'",
                        "drop the extra ':' (write a.csv:b.csv)");
      out.push_back(a.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

std::string absolute_table_list(const std::vector<std::string>& paths) {
  std::string out;
  for (const std::string& p : paths)
    out += (out.empty() ? "" : ":") + std::filesystem::absolute(p).lexically_normal().string();
  return out;
}

std::vector<TableFinding> duplicate_key_findings(const TuningTable& t) {
  std::vector<TableFinding> out;
  std::unordered_map<std::string, std::size_t> first;  // key -> the first untagged row of it
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    if (!t.rows[i].tag.empty()) continue;
    const auto [at, fresh] = first.emplace(key_cells(t.rows[i]), i);
    if (!fresh)
      out.push_back({t.rows[i].line, fmt::format("duplicates the key of line {} ({}): a file must say which row it "
                                                 "means", t.rows[at->second].line, key_text(t.rows[i]))});
  }
  return out;
}

TableSet resolve_table_set(std::vector<TuningTable> tables, const std::vector<std::string>& acknowledged) {
  TableSet s;
  s.tables = std::move(tables);
  for (const TuningTable& t : s.tables)
    for (const TableFinding& f : duplicate_key_findings(t))
      s.findings.push_back({fmt::format("{}:{}", t.file, f.line), f.message, true, true});
  std::vector<RowRef> alive;
  std::vector<bool> dead;
  std::unordered_map<std::string, std::vector<std::size_t>> earlier;  // key -> rows of earlier files (into alive)
  for (std::size_t i = 0; i < s.tables.size(); ++i) {
    std::vector<std::pair<std::string, std::size_t>> this_file;  // a file's rows meet the later files' only
    for (std::size_t k = 0; k < s.tables[i].rows.size(); ++k) {
      const RowRef ref{i, k};
      const TuningRow& l = s.row(ref);
      if (!l.tag.empty()) {
        s.tagged.push_back(ref);
        continue;
      }
      // An earlier row of the same key is replaced. Else an earlier any-CU row of the key is shadowed on l's CU
      // count; where an earlier exact-CU row exists it shadowed that row already, and the override is of that row.
      std::string key = key_cells(l);
      bool exact = false;
      if (const auto it = earlier.find(key); it != earlier.end())
        for (const std::size_t e : it->second)
          if (!dead[e]) {
            s.overrides.push_back({ref, alive[e], false, false});
            dead[e] = exact = true;
          }
      if (!exact && l.cu_num != 0) {
        TuningRow any = l;
        any.cu_num = 0;
        if (const auto it = earlier.find(key_cells(any)); it != earlier.end())
          for (const std::size_t e : it->second)
            if (!dead[e]) s.overrides.push_back({ref, alive[e], true, false});
      }
      alive.push_back(ref);
      dead.push_back(false);
      this_file.emplace_back(std::move(key), alive.size() - 1);
    }
    for (auto& [key, e] : this_file) earlier[key].push_back(e);
  }
  for (std::size_t e = 0; e < alive.size(); ++e)
    if (!dead[e]) s.dispatched.push_back(alive[e]);
  std::vector<std::pair<std::vector<std::size_t>, int>> acks;
  for (const std::string& a : acknowledged) acks.push_back(acknowledged_rows(a, s.tables));
  std::vector<bool> ack_used(acknowledged.size(), false);
  std::set<std::pair<std::size_t, std::size_t>> winners;
  for (TableOverride& o : s.overrides) {
    const TuningRow& w = s.row(o.winner);
    winners.insert({o.winner.table, o.winner.row});
    o.acknowledged = !w.override_ack.empty();
    for (std::size_t a = 0; a < acknowledged.size(); ++a)
      if (acks[a].second == w.line &&
          std::find(acks[a].first.begin(), acks[a].first.end(), o.winner.table) != acks[a].first.end())
        o.acknowledged = ack_used[a] = true;
    const std::string what =
        fmt::format("overrides {} ({}){}", s.where(o.shadowed), key_text(s.row(o.shadowed)),
                    o.any_cu ? fmt::format(" on devices of {} compute units (the any-CU row at cu_num 0)", w.cu_num) : "");
    if (o.acknowledged)
      s.findings.push_back({s.where(o.winner), "override, acknowledged: " + what, false});
    else
      s.findings.push_back({s.where(o.winner), what + ": not acknowledged; review it, then mark the row with an "
                                                      "`_override` cell or pass --acknowledge-override " +
                                                      s.where(o.winner)});
  }
  for (std::size_t a = 0; a < acknowledged.size(); ++a)
    if (!ack_used[a])
      s.findings.push_back({"--acknowledge-override", "'" + acknowledged[a] + "' names no row of the set that overrides "
                                                      "another: drop it (FILE:LINE of the overriding row)"});
  for (std::size_t i = 0; i < s.tables.size(); ++i)
    for (std::size_t k = 0; k < s.tables[i].rows.size(); ++k) {
      const TuningRow& r = s.tables[i].rows[k];
      if (!r.override_ack.empty() && r.tag.empty() && !winners.count({i, k}))
        s.findings.push_back({s.where({i, k}), "its `_override` cell acknowledges an override, but the row overrides "
                                               "no row of an earlier table: clear the cell, or restore the table it "
                                               "was reviewed against"});
    }
  return s;
}

TableSet read_table_set(const std::vector<std::string>& paths, const std::vector<std::string>& acknowledged) {
  std::vector<TuningTable> tables;
  for (const std::string& p : paths) tables.push_back(read_table_file(p));
  return resolve_table_set(std::move(tables), acknowledged);
}

std::optional<SetLookup> lookup_in_set(const TableSet& s, const TuningRow& key) {
  // The device's candidates, each as a row at the device's cu_num, so that the token rule of `lookup` picks among
  // them; per token key the exact-CU row displaces the any-CU row.
  TuningTable view;
  std::vector<RowRef> refs;
  std::vector<bool> any_cu;
  for (const RowRef ref : s.dispatched) {
    const TuningRow& r = s.row(ref);
    if (r.gfx != key.gfx || (r.cu_num != key.cu_num && r.cu_num != 0)) continue;
    TuningRow c = r;
    c.cu_num = key.cu_num;
    c.token = key.token;
    if (!same_key(c, key)) continue;  // another shape
    c.token = r.token;
    std::size_t i = 0;
    while (i < view.rows.size() && view.rows[i].token != c.token) ++i;
    if (i < view.rows.size()) {
      if (r.cu_num == 0) continue;  // the exact-CU row of this token is already in
      view.rows[i] = c, refs[i] = ref, any_cu[i] = false;
      continue;
    }
    view.rows.push_back(c);
    refs.push_back(ref);
    any_cu.push_back(r.cu_num == 0);
  }
  const auto l = lookup(view, key);
  if (!l) return std::nullopt;
  const std::size_t i = std::size_t(l->row - view.rows.data());
  SetLookup out;
  out.ref = refs[i];
  out.row = &s.row(refs[i]);
  out.any_cu = any_cu[i];
  out.rule = (any_cu[i] ? "any-CU row (cu_num=0), " : "") + l->rule;
  return out;
}

std::string row_label(const TableSet& s, RowRef r) {
  const std::string& path = s.tables[r.table].file;
  int same_name = 0;
  for (const TuningTable& t : s.tables) same_name += file_name(t.file) == file_name(path);
  return fmt::format("{}:{}", same_name > 1 ? path : file_name(path), s.row(r).line);
}

}  // namespace moe
