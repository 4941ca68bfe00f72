// Fuzz target: the tuning table (CSV) reader (harness/tuning/tuning_table.hpp) on arbitrary bytes, as `run
// --dispatch-table T`, `tune` and `check-table T` read a table. What it accepts must keep the reader's promises:
// every row's dispatch choice parses, and its shape key is the one its case_id gives (so a lookup can reach it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "fixtures/fuzz/fuzz_contract.hpp"
#include "fixtures/fuzz/mem_file.hpp"
#include "harness/tuning/tuning_table.hpp"
#include "kernels/gpu/dispatch_options.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static moe::fuzz::MemFile file;
  const std::string& path = file.hold(data, size);
  moe::fuzz::expect_accept_or_bad_input(path, [&] {
    const moe::TuningTable t = moe::read_tuning_table(path);
    for (const moe::TuningRow& r : t.rows) {
      (void)moe::gpu::parse_dispatch_options(moe::gpu::split_dispatch_choice(r.dispatch));  // must not throw
      if (r.line < 2) std::abort();
    }
  });
  return 0;
}
