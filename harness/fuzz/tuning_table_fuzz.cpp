// Fuzz target: the tuning table (CSV) readers on arbitrary bytes, as `run --dispatch-table T`, `tune` and
// `check-table T` read a table: read_tuning_table (this harness's columns) and read_table_file (either column set,
// with `_tag` / `_override`). What they accept must keep the readers' promises: every row's dispatch choice parses,
// names each switch once, ends in no empty item and is empty on a host row; its shape key is the one its case_id
// gives; the header names no column twice (two unnamed columns included); every cell of a number column of either
// column set is plain decimal, also a column the reader does not use (issue 48: " 2", "+3", "0x1p4", 2^64, "date1" and
// NUL bytes were read); the file does not start with a UTF-8 byte order mark (docs/reliability.md: refused by both
// readers). The text checks below split the bytes themselves, independently of the readers' parsing.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures/fuzz/fuzz_contract.hpp"
#include "fixtures/fuzz/mem_file.hpp"
#include "harness/tuning/table_file.hpp"
#include "harness/tuning/tuning_table.hpp"
#include "kernels/gpu/dispatch_options.hpp"

namespace {

bool whole(const std::string& s) {
  const std::size_t from = !s.empty() && s[0] == '-' ? 1 : 0;
  return s.size() > from && s.find_first_not_of("0123456789", from) == std::string::npos;
}
// Decimal digits with an optional '-', fraction and exponent; or nan / inf / -inf as printf writes them.
bool real(std::string s) {
  if (s == "nan" || s == "inf" || s == "-inf") return true;
  if (!s.empty() && s.back() == '%') s.pop_back();  // AITER's err1 / err2
  std::size_t i = !s.empty() && s[0] == '-' ? 1 : 0, digits = 0;
  const auto run = [&] {
    std::size_t n = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i, ++n;
    return n;
  };
  digits += run();
  if (i < s.size() && s[i] == '.') ++i, digits += run();
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (run() == 0) return false;
  }
  return i == s.size();
}

void check_text(const std::uint8_t* data, std::size_t size) {
  if (size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF) std::abort();
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> cells = moe::tuning_csv_cells(line);
    if (header.empty()) {
      header = cells;
      if (std::set<std::string>(header.begin(), header.end()).size() != header.size()) std::abort();
      continue;
    }
    for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) {
      const std::string& h = header[i];
      const std::string& c = cells[i];
      if (c.empty()) continue;
      if ((h == "cu_num" || h == "token" || h == "model_dim" || h == "inter_dim" || h == "expert" || h == "topk" ||
           h == "use_g1u1" || h == "doweight_stage1" || h == "block_m" || h == "ksplit") &&
          !whole(c))
        std::abort();
      if ((h == "us" || h == "err" || h == "err1" || h == "err2" || h == "runner_up_us" || h == "runner_up_err") &&
          !real(c))
        std::abort();
    }
  }
}

void check_rows(const moe::TuningTable& t) {
  for (const moe::TuningRow& r : t.rows) {
    const std::vector<std::string> items = moe::gpu::split_dispatch_choice(r.dispatch);
    (void)moe::gpu::parse_dispatch_options(items);  // must not throw
    if (r.line < 2) std::abort();
    if (!r.dispatch.empty() && (r.dispatch.back() == ',' || r.gfx == "host")) std::abort();
    std::set<std::string> keys;
    for (const std::string& i : items)
      if (!keys.insert(i.substr(0, i.find('='))).second) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static moe::fuzz::MemFile file;
  const std::string& path = file.hold(data, size);
  moe::fuzz::expect_accept_or_bad_input(path, [&] {
    const moe::TuningTable t = moe::read_tuning_table(path);
    check_rows(t);
    check_text(data, size);
  });
  moe::fuzz::expect_accept_or_bad_input(path, [&] {
    const moe::TuningTable t = moe::read_table_file(path);
    check_rows(t);
    check_text(data, size);
  });
  return 0;
}
