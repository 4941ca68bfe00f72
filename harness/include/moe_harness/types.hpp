// The types of the public API (namespace moe::api), re-exported from the harness as they are: what a client holds
// is what the CLI and the runner hold, so a record from the API is the record `run` writes. One API struct,
// Fixture, groups what today's code keeps in locals of the pipeline (the problem with the seed applied, the pristine
// checkpoint and its fingerprint). docs/architecture.md "The public API" says why each type is exposed as it is.
#pragma once
#include <cstdint>

#include "fixtures/checkpoint.hpp"
#include "formats/dtype.hpp"
#include "fixtures/error.hpp"
#include "fixtures/problem.hpp"
#include "fixtures/rounding_contract.hpp"
#include "fixtures/tensor.hpp"
#include "harness/case/case_loader.hpp"
#include "harness/pipeline/case_pipeline.hpp"
#include "harness/case/case_spec.hpp"
#include "harness/run/gating.hpp"
#include "harness/pipeline/reference_cache.hpp"
#include "verdict/thresholds.hpp"
#include "harness/pipeline/weight_cache.hpp"
#include "kernels/kernel_under_test.hpp"
#include "kernels/runtime/device_info.hpp"
#include "reports/report_files.hpp"
#include "reports/report_reader.hpp"
#include "reports/run_report.hpp"
#include "reports/verdict.hpp"

namespace moe::api {

// Cases and suites (harness/case/case_spec.hpp, harness/case/case_loader.hpp, fixtures/problem.hpp).
using moe::CaseSpec;
using moe::ProblemSpec;
using moe::Suite;
using moe::Tier;
// Tensors and checkpoints (fixtures/tensor.hpp, fixtures/checkpoint.hpp, formats/dtype.hpp): host memory, move-only, 64-byte aligned.
using moe::Checkpoint;
using moe::DType;
using moe::ExpertWeights;
using moe::Tensor;
using moe::dtype_info;
using moe::dtype_name;
using moe::dtype_size;
using moe::parse_dtype;
// Devices, gating and kernels (kernels/runtime/device_info.hpp, harness/run/gating.hpp, kernels/kernel_under_test.hpp).
using moe::DeviceDetection;
using moe::DeviceInfo;
using moe::DeviceRequirement;
using moe::GateDecision;
using moe::KernelUnderTest;
using moe::RunInfo;
using moe::Support;
// References, thresholds and caches (harness/pipeline/reference_cache.hpp, verdict/thresholds.hpp, harness/pipeline/weight_cache.hpp).
using moe::ReferenceCache;
using moe::ReferenceSet;
using moe::RoutingResult;
using moe::Thresholds;
using moe::WeightCache;
// The pipeline's options: seed override, caches, probe switches, test hooks (harness/pipeline/case_pipeline.hpp).
using moe::PipelineOptions;
// Rounding contracts (fixtures/rounding_contract.hpp): a kernel's declaration, its text form and parser.
using moe::RoundingContract;
using moe::parse_rounding_contract;
using moe::parse_rounding_contract_or_throw;
using moe::to_text;
using moe::ContractRecord;
// Records and reports (reports/run_report.hpp, reports/report_files.hpp, reports/report_reader.hpp); a record's
// status and failed check with their report.json spellings (reports/verdict.hpp).
using moe::CaseRecord;
using moe::Check;
using moe::Status;
using moe::failing;
using moe::parse_check;
using moe::parse_status;
using moe::to_string;
using moe::Provenance;
using moe::ReadReport;
using moe::ReportFiles;
using moe::RunReport;
// Errors: every bad input throws moe::Error with its exit code (fixtures/error.hpp; docs/cli.md "Exit codes").
using moe::Error;
using moe::ExitCode;
// How a kernel or a client raises them: bad input (exit 2) naming where, key and fix; a harness error (exit 3).
using moe::throw_bad_input;
using moe::throw_harness_error;

// A case's fixture: the problem it runs (the case's, with a seed override applied), the pristine checkpoint the
// references read (a kernel gets a clone()), and that checkpoint's fingerprint (Checkpoint::fingerprint()).
struct Fixture {
  ProblemSpec problem;
  Checkpoint pristine;
  std::uint64_t fingerprint = 0;
};

}  // namespace moe::api
