// The GPU kernels' A/B switches: run options (`moe-harness run --dispatch KEY=VALUE`, also `calibrate`), handed to
// the kernel by the registry, that turn one dispatch rule of kernels/gpu/dispatch_plan.cpp off or force it, so a
// benchmark can compare two paths on the same cases. The report's variant names the path that ran. Plain host code
// (no GPU header): parsed and checked in every build.
#pragma once
#include <string>
#include <vector>

namespace moe::gpu {

struct DispatchOptions {
  int tokens_per_pass = 0;   // grouped_tokens_per_pass: 0 = the rule (2 at decode, else 8); 8 = always 8
  bool grouped_mma = true;   // grouped_mma=off: the 8-token passes stay on the FMA kernels
  bool decode_mma = true;    // decode_mma=off: the 2-token passes of fp8 / MX weights stay on the FMA kernels
  bool operator==(const DispatchOptions&) const = default;
};

// Each item is KEY=VALUE: grouped_tokens_per_pass=auto|8, grouped_mma=on|off, decode_mma=on|off; a later item for
// the same key wins, every item over `base`. Anything else is bad input (exit 2) naming the item and the accepted
// spellings.
DispatchOptions parse_dispatch_options(const std::vector<std::string>& items, const DispatchOptions& base = {});
// A tuned table's choice ("grouped_mma=off,decode_mma=off"; "" for none) as its items.
std::vector<std::string> split_dispatch_choice(const std::string& choice);
// The accepted KEY=VALUE spellings, for help texts and error messages.
std::string dispatch_option_spellings();
// The environment variables that were these switches (MOE_GROUPED_TOKENS_PER_PASS, MOE_GROUPED_MMA, MOE_DECODE_MMA)
// are read by nothing; a script still setting one would measure the default path twice and call it an A/B. Bad
// input (exit 2) naming the --dispatch spelling when any of them is set; the GPU kernel checks at construction.
void refuse_retired_dispatch_env();

}  // namespace moe::gpu
