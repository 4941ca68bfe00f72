// Reading one file of a table set (docs/tuning.md "Table sets"), in either column set a deployed set holds:
// - this harness's (the columns tuning_table.hpp writes; told apart by its `shape` column), read by
//   read_tuning_table;
// - AITER's tuned fused-MoE columns: the key gfx, cu_num, token, model_dim, inter_dim, expert, topk, act_type, dtype,
//   q_dtype_a, q_dtype_w, q_type, use_g1u1, doweight_stage1; the choice block_m, ksplit, us, the errors (err, or
//   err1/err2 as AITER writes them, "0.5%" read as 0.005) and the kernel names (kernelName1, kernelName2). Its rows
//   have no shape (empty) and no harness dispatch: no harness kernel runs them (TuningTable::aiter).
// Either may carry `_tag` (non-empty: the row takes no part in normal dispatch) and `_override` (non-empty: this
// row's override of an earlier table's row is acknowledged). Every row gets the file name and its line.
#pragma once
#include <string>

#include "harness/tuning/tuning_table.hpp"

namespace moe {

// Bad input (exit 2) naming file:line and the column for a header of neither column set, a wrong cell count, an
// unparsable number; FILE:1 and key `header` for a file that starts with a UTF-8 byte order mark.
TuningTable read_table_file(const std::string& path);

}  // namespace moe
