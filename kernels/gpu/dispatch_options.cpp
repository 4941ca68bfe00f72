#include "kernels/gpu/dispatch_options.hpp"

#include <algorithm>
#include <cstdlib>

#include "fixtures/error.hpp"

namespace moe::gpu {

std::string dispatch_option_spellings() { return "grouped_tokens_per_pass=auto|8, grouped_mma=on|off, decode_mma=on|off"; }

DispatchOptions parse_dispatch_options(const std::vector<std::string>& items, const DispatchOptions& base) {
  DispatchOptions o = base;
  for (const std::string& item : items) {
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    auto bad = [&](const std::string& problem) {
      throw_bad_input("command line", "--dispatch", "'" + item + "': " + problem,
                      "use KEY=VALUE, one of " + dispatch_option_spellings());
    };
    if (eq == std::string::npos) bad("not KEY=VALUE");
    auto on_off = [&](bool& field) {
      if (value != "on" && value != "off") bad("the value must be on or off");
      field = value == "on";
    };
    if (key == "grouped_tokens_per_pass") {
      if (value != "auto" && value != "8") bad("the value must be auto or 8");
      o.tokens_per_pass = value == "8" ? 8 : 0;
    } else if (key == "grouped_mma") {
      on_off(o.grouped_mma);
    } else if (key == "decode_mma") {
      on_off(o.decode_mma);
    } else {
      bad("unknown switch '" + key + "'");
    }
  }
  return o;
}

std::vector<std::string> split_dispatch_choice(const std::string& choice) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start < choice.size()) {
    const std::size_t comma = std::min(choice.find(',', start), choice.size());
    items.push_back(choice.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

void refuse_retired_dispatch_env() {
  struct Retired { const char* var; const char* option; };
  for (const Retired r : {Retired{"MOE_GROUPED_TOKENS_PER_PASS", "grouped_tokens_per_pass=8"},
                          Retired{"MOE_GROUPED_MMA", "grouped_mma=off"}, Retired{"MOE_DECODE_MMA", "decode_mma=off"}})
    if (std::getenv(r.var))
      throw_bad_input("environment", r.var, "is set, but the GPU kernels no longer read it (their A/B switches are run options)",
                      std::string("unset ") + r.var + " and pass --dispatch " + r.option + " to run or calibrate");
}

}  // namespace moe::gpu
