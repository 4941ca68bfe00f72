// Every runtime call is checked, and the last error after every launch. A failure throws moe::Error carrying the
// call site and the runtime's own message; the pipeline reports it for that case:
//  - out of device memory: a failed case (ExitCode::case_failed, failed_check out_of_memory); the case's buffers
//    are freed as it unwinds (DeviceBuffer), and the runtime's last error is cleared so the next case starts clean;
//  - a sticky error (illegal address, device-side trap or assert, launch failure or time-out, hardware exception):
//    the context is unusable for the rest of the process; noted (device_fault.hpp) so that an isolated worker exits
//    after this case, then a harness error;
//  - anything else: a harness error.
#pragma once
#include <string>

#include "fixtures/error.hpp"
#include "kernels/runtime/device_fault.hpp"
#include "kernels/runtime/gpu_runtime.hpp"
#include "kernels/runtime/hip_compat.hpp"

namespace moe::gpu {

inline bool sticky_gpu_error(hipError_t e) {
  switch (e) {
    case hipErrorIllegalAddress:
    case hipErrorLaunchFailure:
    case hipErrorAssert:
    case hipErrorLaunchTimeOut:
#if !(defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__))
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
#endif
      return true;
    default:
      return false;
  }
}

[[noreturn]] inline void throw_gpu_error(const char* file, int line, const std::string& what, hipError_t e) {
  const std::string where = std::string(file) + ":" + std::to_string(line);
  const std::string msg = what + " failed: " + hipGetErrorName(e) + ": " + hipGetErrorString(e);
  if (sticky_gpu_error(e)) {
    note_sticky_device_error(msg);
    throw_harness_error(where, msg + " (a sticky error: the GPU context is unusable from here on)");
  }
  (void)hipGetLastError();  // not sticky: clear it, or the next launch check would report it again
  if (e == hipErrorOutOfMemory)
    throw Error(ExitCode::case_failed, where, "out_of_memory", "out of device memory: " + msg,
                "give the case a smaller shape or run it on a GPU with more memory");
  throw_harness_error(where, msg);
}

}  // namespace moe::gpu

#define MOE_GPU_CHECK(call)                                                                            \
  do {                                                                                                 \
    const auto moe_err_ = (call);                                                                      \
    if (moe_err_ != hipSuccess) ::moe::gpu::throw_gpu_error(__FILE__, __LINE__, #call, moe_err_);       \
  } while (0)

#define MOE_GPU_CHECK_LAUNCH(what)                                                                     \
  do {                                                                                                 \
    const auto moe_err_ = hipGetLastError();                                                           \
    if (moe_err_ != hipSuccess)                                                                        \
      ::moe::gpu::throw_gpu_error(__FILE__, __LINE__, std::string("launch of ") + (what), moe_err_);    \
  } while (0)

// The stream every launch of the kernels goes on: gpu_runtime.hpp launch_stream(), the legacy default stream unless a
// device probe set its own (the mutant build defines it first, kernels/mutants/mutant_hooks.hpp).
#ifndef MOE_LAUNCH_STREAM
#define MOE_LAUNCH_STREAM (static_cast<hipStream_t>(::moe::gpu::launch_stream()))
#endif
