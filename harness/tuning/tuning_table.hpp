// A tuned dispatch table: per case shape and token count, the dispatch variant a tuner chose, its time and error,
// the runner-up, and where the numbers came from. The CSV's first columns follow the convention kernel libraries use
// for their tuned MoE tables (gfx, cu_num, token, model_dim, inter_dim, expert, topk, act_type, dtype, q_dtype_a,
// q_dtype_w, q_type, use_g1u1, doweight_stage1, then block_m, ksplit, us, err, kernel_name); the others are this
// harness's (docs/tuning.md). Read and written here only.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/case/case_spec.hpp"

namespace moe {

struct TuningRow {
  int line = 0;  // 1-based line in the file it was read from (0: not read from a file)
  std::string file;  // the file it was read from, as named to the reader ("": not read from a file)
  // Optional columns (table_file.hpp): `_tag` non-empty keeps the row out of normal dispatch; `_override` non-empty
  // acknowledges that this row overrides a row of an earlier table of a set (table_set.hpp).
  std::string tag, override_ack;
  // The key: the device, the token count and the shape.
  std::string gfx;  // device arch ("sm_90", "gfx942"; "host" for the host contract kernel)
  int cu_num = 0;
  std::int64_t token = 0;
  std::int64_t model_dim = 0, inter_dim = 0, expert = 0;
  int topk = 0;
  std::string act_type, dtype, q_dtype_a, q_dtype_w, q_type;
  int use_g1u1 = 1, doweight_stage1 = 0;
  std::string shape;  // the case id with its token fragment as T* (tells apart shapes the columns above do not)
  // The choice.
  int block_m = 0, ksplit = 1;
  double us = 0, err = 0;  // median kernel time (microseconds) and the judge's max rel of the chosen variant
  std::string kernel_name, dispatch;  // the variant the report names; the option text that selects it ("": default)
  std::string runner_up;              // the next fastest passing variant ("": none)
  double runner_up_us = 0, runner_up_err = 0;
  // Provenance.
  std::string kernel_id, kernel_version, harness_commit, device_name, driver, date, seed, case_id;
};

struct TuningTable {
  std::string file;
  std::vector<TuningRow> rows;
  bool aiter = false;  // read in the AITER column set (table_file.hpp): no harness kernel runs its rows
};

// Bad input naming `where` (FILE:1) and key `header` when the table's first line starts with a UTF-8 byte order mark
// (bytes EF BB BF): the tables are UTF-8 without one (docs/reliability.md), as `tune` writes them and as the run
// journal is, so every table reader refuses it, whichever column set follows.
void refuse_byte_order_mark(const std::string& first_line, const std::string& where);
// Bad input naming `where` and the column when a header names a column twice (a reader would take one of them
// silently): every column of either format (table_file.hpp), `_tag` and `_override` included, once.
void refuse_duplicate_columns(const std::vector<std::string>& header, const std::string& where);
// Bad input naming `where` and the column when a cell of a number column of either format (table_file.hpp) is not
// empty and not a number as the strict parser reads it (fixtures/strict_number.hpp: a whole number in cu_num, token,
// model_dim, inter_dim, expert, topk, use_g1u1, doweight_stage1, block_m, ksplit; a measurement in us, err, err1,
// err2, runner_up_us, runner_up_err, with a trailing '%' where `percent`, as AITER writes its errors). Every reader
// applies it to every row, also to the number columns it does not use, so no table loads with text ("date1", NUL
// bytes) where a number belongs.
void refuse_non_number_cells(const std::vector<std::string>& header, const std::vector<std::string>& cells,
                             const std::string& where, bool percent);
// The seed a row was tuned at (its `seed` cell, a decimal unsigned 64-bit integer checked when the table was read),
// or none for an empty cell: the case's own seed.
std::optional<std::uint64_t> row_seed(const TuningRow& r);
// The CSV header line (the column names in order).
std::string tuning_header();
// Reads a table; bad input (exit 2) naming file:line and the column for a missing header column, a wrong column
// count, an unparsable number. Empty cells read as empty strings and 0, non-finite numbers as such: the checks
// (table_checks.hpp) judge them, the reader only parses.
TuningTable read_tuning_table(const std::string& path);
// Writes atomically (never half-written).
void write_tuning_table(const TuningTable& t, const std::string& path);
// The cells of one CSV line as the reader splits them, and one row as the writer writes it (no newline): for the
// readers and writers of table_file.hpp and table_merge.hpp, so every table is split and quoted alike.
std::vector<std::string> tuning_csv_cells(const std::string& line);
std::string tuning_csv_line(const TuningRow& r);

// The key columns of case c on a device (arch, compute units) at the case's token count; shape and the other
// fields filled, the choice and provenance left empty.
TuningRow key_of(const CaseSpec& c, const std::string& gfx, int cu_num);
// Whether two rows have the same key (gfx, cu_num, token and every shape column).
bool same_key(const TuningRow& a, const TuningRow& b);
bool same_shape(const TuningRow& a, const TuningRow& b);  // the key without the token count
// The key's cells (and the shape's: the key without the token) as one string: equal exactly when same_key
// (same_shape) holds, for grouping rows by key in one pass.
std::string key_cells(const TuningRow& r);
std::string shape_cells(const TuningRow& r);

// The row a case of `tokens` tokens and the shape of `key` dispatches from, on the key's device: among the rows
// of that shape and device, the one at the largest power of two not above `tokens`; else (coarse tiers) the one at
// the largest token count not above `tokens`; else the one at the smallest token count. nullopt: no row of the
// shape. `exact`: the row's token count equals `tokens`.
struct Lookup {
  const TuningRow* row = nullptr;
  bool exact = false;
  std::string rule;  // "exact", "power of two below", "coarse tier below", "smallest tier"
};
std::optional<Lookup> lookup(const TuningTable& t, const TuningRow& key);

}  // namespace moe
