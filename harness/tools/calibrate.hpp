// `moe-harness calibrate`: runs a kernel believed correct over many seeds and reports, per quant scheme, the worst
// metrics it reached beside the default thresholds (verdict/thresholds.cpp) and the margin between them. The
// thresholds are justified by this output (committed under results/calibration/); it fails (exit 1) when any
// clean run would have failed, i.e. when a threshold is too tight for a correct kernel.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kernels/gpu/dispatch_options.hpp"

namespace moe {

struct CalibrateOptions {
  std::string suite = "smoke";
  std::vector<std::string> filters;
  std::vector<std::string> kernels;  // default: the host kernel
  int seeds = 20;
  gpu::DispatchOptions dispatch;  // the GPU kernels' A/B switches (--dispatch)
  std::filesystem::path json;
  bool isolation = true;  // each run in a worker process under the watchdog (harness/isolation/executor.hpp)
  std::optional<double> case_timeout_s;
  int jobs = 1;         // worker processes judging at once (--jobs; harness/isolation/jobs.hpp)
  int job_threads = 0;  // each worker's OpenMP threads (--job-threads); 0: the default for jobs
};

int run_calibration(const CalibrateOptions& opt);

}  // namespace moe
