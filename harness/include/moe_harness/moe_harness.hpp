// The public C++ API of moe-harness, in one include: suites (moe_harness/suite.hpp), one case step by step or whole
// (moe_harness/case.hpp), reports (moe_harness/report.hpp), whole runs (moe_harness/runner.hpp). Link
// MoeHarness::api (find_package(MoeHarness)); docs/architecture.md "The public API".
#pragma once
#include "moe_harness/case.hpp"
#include "moe_harness/report.hpp"
#include "moe_harness/runner.hpp"
#include "moe_harness/suite.hpp"
#include "moe_harness/types.hpp"
