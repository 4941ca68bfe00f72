// `moe-harness selftest`: proves the harness catches broken kernels without crying wolf (issue 7).
//  - the clean kernel must pass every selftest case for N seeds (false alarms: none allowed for our criterion);
//  - each mutant (kernels/mutants) runs on the cases where it applies; where its output really differs from the
//    clean kernel's (a live case), our verdict must fail it, naming the check that caught it;
//  - a kernel that writes into the pristine tensors must surface as a harness error;
//  - the anchors' published criteria (harness/anchor_criteria) are scored on the same outputs, side by side.
#pragma once
#include <filesystem>
#include <string>

namespace moe {

struct SelftestOptions {
  std::string suite = "selftest";
  int seeds = 20;
  std::filesystem::path json;  // optional machine-readable table
};

int run_selftest(const SelftestOptions& opt);  // 0: every mutant caught and no clean failure; 1 otherwise

}  // namespace moe
