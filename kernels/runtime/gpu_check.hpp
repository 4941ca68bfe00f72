// Every runtime call is checked, and the last error after every launch. A failure throws moe::Error
// (harness_error) carrying the call site and the runtime's own message; the pipeline reports it for that case.
#pragma once
#include <string>

#include "fixtures/error.hpp"

#define MOE_GPU_CHECK(call)                                                                                   \
  do {                                                                                                        \
    const auto moe_err_ = (call);                                                                             \
    if (moe_err_ != hipSuccess)                                                                               \
      ::moe::throw_harness_error(std::string(__FILE__) + ":" + std::to_string(__LINE__),                      \
                                 std::string(#call) + " failed: " + hipGetErrorName(moe_err_) + ": " +        \
                                     hipGetErrorString(moe_err_));                                            \
  } while (0)

#define MOE_GPU_CHECK_LAUNCH(what)                                                                            \
  do {                                                                                                        \
    const auto moe_err_ = hipGetLastError();                                                                  \
    if (moe_err_ != hipSuccess)                                                                               \
      ::moe::throw_harness_error(std::string(__FILE__) + ":" + std::to_string(__LINE__),                      \
                                 std::string("launch of ") + (what) + " failed: " + hipGetErrorName(moe_err_) + \
                                     ": " + hipGetErrorString(moe_err_));                                     \
  } while (0)
