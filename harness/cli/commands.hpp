// Subcommands of moe-harness, one file each. Each sets exit_code; errors throw moe::Error (exit 2 or 3).
#pragma once
#include <CLI/CLI.hpp>

#include "harness/cli/number_checks.hpp"  // the validators of every numeric option

namespace moe::cli {
void add_formats_command(CLI::App& app, int& exit_code);
void add_list_command(CLI::App& app, int& exit_code);
void add_describe_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code);
void add_selftest_command(CLI::App& app, int& exit_code);
void add_compare_command(CLI::App& app, int& exit_code);
void add_gate_command(CLI::App& app, int& exit_code);
void add_calibrate_command(CLI::App& app, int& exit_code);
void add_merge_command(CLI::App& app, int& exit_code);
void add_judge_command(CLI::App& app, int& exit_code);
void add_html_command(CLI::App& app, int& exit_code);
void add_report_command(CLI::App& app, int& exit_code);
}  // namespace moe::cli
