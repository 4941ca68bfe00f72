// A whole suite run as `moe-harness run` runs it: every (case, kernel) a GoogleTest test, cases judged in worker
// processes under a watchdog (unless options.isolation is false), the journal, the report directory, the exit code.
// Isolated runs start workers by re-executing this program as `PROGRAM __worker`: a program other than moe-harness
// either calls worker_main() first in its main() or sets isolation = false.
#pragma once
#include "harness/run/runner.hpp"
#include "moe_harness/types.hpp"

namespace moe::api {

using moe::RunOptions;

// The run; returns the process exit code (docs/cli.md "Exit codes").
int run_suite(const RunOptions& options);

// When argv asks for the worker side of isolation (`PROGRAM __worker`), runs it and returns its exit status;
// otherwise returns nullopt and does nothing.
std::optional<int> worker_main(int argc, char** argv);

}  // namespace moe::api
