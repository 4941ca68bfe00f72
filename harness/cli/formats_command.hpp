#pragma once
#include <CLI/CLI.hpp>

namespace moe::cli {
// `moe-harness formats decode FORMAT`: every code, one line each: "0x00 <value %.9g>".
void add_formats_command(CLI::App& app, int& exit_code);
}  // namespace moe::cli
