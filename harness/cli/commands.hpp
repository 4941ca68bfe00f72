// Subcommands of moe-harness, one file each. Each sets exit_code; errors throw moe::Error (exit 2 or 3).
#pragma once
#include <CLI/CLI.hpp>

#include "harness/cli/number_checks.hpp"  // the validators of every numeric option

namespace moe::cli {
// Each adds its subcommand to app; exit_code receives its exit status.
using AddCommand = void(CLI::App& app, int& exit_code);
AddCommand add_formats_command, add_list_command, add_describe_command, add_run_command, add_export_command,
    add_selftest_command, add_compare_command, add_gate_command, add_calibrate_command, add_merge_command,
    add_judge_command, add_html_command, add_report_command, add_tune_command, add_check_table_command;

// Every subcommand, in the order `moe-harness --help` lists them.
inline constexpr AddCommand* kCommands[] = {
    add_formats_command, add_list_command, add_describe_command, add_run_command, add_export_command,
    add_selftest_command, add_compare_command, add_gate_command, add_calibrate_command, add_merge_command,
    add_judge_command, add_html_command, add_report_command, add_tune_command, add_check_table_command,
};
}  // namespace moe::cli
