// `moe-harness judge --dir DIR`: every case directory `export --suite` wrote, judged in one process on the output
// an external program left in it, with the verdicts, thresholds and report files of `run` (report.json, junit.xml,
// summary.md, report.html). Each case's exported reference is used only when it is provably the one this harness
// would compute (docs/architecture.md "Batch export and judge"): the reference key export recorded (case id,
// reference version, canonical case hash, effective rounding contract, fixture fingerprint) equals the key of the
// case as the suite defines it now, under the contract judged now, on the fingerprint the output was computed from,
// and the reference file's contents hash to what export recorded. Otherwise, and always with --recompute, the case
// goes through the whole pipeline (fixture regenerated, references recomputed). A case whose output is missing,
// truncated or malformed, or records another fixture, is an error record naming the file, the key and the fix;
// the other cases are judged all the same.
#pragma once
#include <filesystem>
#include <string>

namespace moe {

struct BatchJudgeOptions {
  std::filesystem::path dir;
  std::string suite;                      // empty: the suite file the index names
  std::string output = "out.safetensors"; // the output file in each case directory
  std::string tensor = "out";
  std::string kernel_id = "external";
  std::string contract = "default";       // the rounding points the program fixes (judge --contract)
  bool recompute = false;                 // never use an exported reference
  bool allow_missing_fingerprint = false;
  std::filesystem::path report_dir, junit, json;
};

// The exit code of `run` (docs/cli.md "Exit codes"): 0 all passed, 1 a case failed, 2 a case's own input is bad (a
// record with failed_check bad_input: not exported for it, or found so when its reference was recomputed), else 3 a
// case could not be judged (an error record: its output unusable, or the case not exported), 4 nothing judged;
// 128 + N if signal N stopped it. DIR missing, empty or without its index, a suite or option that cannot be read:
// bad input (moe::Error, exit 2) before anything is written.
int judge_directory(const BatchJudgeOptions& opt);

}  // namespace moe
