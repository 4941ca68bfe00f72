// Fuzz target: the export index reader (harness/batch/export_index.hpp) on arbitrary bytes, as `moe-harness judge
// --dir DIR` reads DIR/index.json. What it accepts must keep the reader's promises: each case listed once, an
// exported case's directory the one its id gives, a case not exported failed by bad_input or harness_error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "fixtures/fuzz/fuzz_contract.hpp"
#include "harness/batch/export_index.hpp"
#include "harness/fuzz/temp_dir.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static moe::fuzz::TempDir dir;
  const std::string& d = dir.hold(moe::kExportIndexFile, data, size);
  moe::fuzz::expect_accept_or_bad_input(d, [&] {
    const moe::ExportIndex x = moe::read_export_index(d);
    std::set<std::string> ids;
    for (const moe::ExportEntry& e : x.cases) {
      if (!ids.insert(e.id).second) std::abort();
      if (e.exported && e.dir != moe::case_dir_name(e.id)) std::abort();
      if (!e.exported && e.failed_check != moe::Check::bad_input && e.failed_check != moe::Check::harness_error)
        std::abort();
    }
  });
  return 0;
}
