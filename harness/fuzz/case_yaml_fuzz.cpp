// Fuzz target: the case-suite loader (harness/case/case_loader.hpp) on arbitrary text, as `moe-harness run --suite F`
// reads a file. A suite it accepts must keep the loader's promises: every case has a non-empty, unique id.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "fixtures/fuzz/fuzz_contract.hpp"
#include "harness/case/case_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string label = "fuzz.yaml";
  const std::string text(reinterpret_cast<const char*>(data), size);
  moe::fuzz::expect_accept_or_bad_input(label, [&] {
    const moe::Suite s = moe::load_suite_text(text, label);
    std::set<std::string> ids;
    for (const auto& c : s.cases)
      if (c.id.empty() || !ids.insert(c.id).second) std::abort();
  });
  return 0;
}
