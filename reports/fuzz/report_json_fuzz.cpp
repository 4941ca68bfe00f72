// Fuzz target: the run-report reader (reports/report_reader.hpp) on arbitrary bytes, as `moe-harness compare`,
// `gate`, `merge` and `html` read report.json files.
#include <cstddef>
#include <cstdint>

#include "fixtures/fuzz/fuzz_contract.hpp"
#include "fixtures/fuzz/mem_file.hpp"
#include "reports/report_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static moe::fuzz::MemFile file;
  const std::string& path = file.hold(data, size);
  moe::fuzz::expect_accept_or_bad_input(path, [&] { moe::read_report(path); });
  return 0;
}
