// The HIP runtime API as the kernels use it. On AMD this is the real HIP runtime. On NVIDIA the same sources build
// as CUDA through the small mapping below: Debian's HIP 5.2 NVIDIA headers do not compile against CUDA 13 (they use
// removed cudaDeviceProp fields), so the project maps exactly the names it uses and nothing else.
#pragma once

#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#include <hip/hip_runtime.h>
#define MOE_GPU_VENDOR "amd"
#else
#include <cuda_runtime.h>
#define MOE_GPU_VENDOR "nvidia"
using hipError_t = cudaError_t;
using hipStream_t = cudaStream_t;
using hipEvent_t = cudaEvent_t;
using hipDeviceProp_t = cudaDeviceProp;
#define hipSuccess cudaSuccess
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpyToSymbol cudaMemcpyToSymbol
#define HIP_SYMBOL(X) X
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamCreate cudaStreamCreate
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipStreamIsCapturing cudaStreamIsCapturing
#define hipStreamCaptureStatus cudaStreamCaptureStatus
#define hipStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define hipGraph_t cudaGraph_t
#define hipGraphExec_t cudaGraphExec_t
#define hipGraphDestroy cudaGraphDestroy
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipHostMalloc(p, n, f) cudaHostAlloc((p), (n), (f))
#define hipHostMallocMapped cudaHostAllocMapped
#define hipHostFree cudaFreeHost
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#define hipMemcpyToSymbolAsync cudaMemcpyToSymbolAsync
#define hipStreamDestroy cudaStreamDestroy
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipEventCreate cudaEventCreate
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipEventDestroy cudaEventDestroy
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipErrorNoDevice cudaErrorNoDevice
#define hipErrorInsufficientDriver cudaErrorInsufficientDriver
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorIllegalAddress cudaErrorIllegalAddress
#define hipErrorLaunchFailure cudaErrorLaunchFailure
#define hipErrorAssert cudaErrorAssert
#define hipErrorLaunchTimeOut cudaErrorLaunchTimeout
#endif

// Butterfly exchange within aligned groups of `width` lanes. Callers keep width <= 32 and a power of two, so the
// same code is right for 32-wide warps and 64-wide wavefronts, and every lane of the group must reach the call.
#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#define MOE_SHFL_XOR(v, mask, width) __shfl_xor((v), (mask), (width))
#else
#define MOE_SHFL_XOR(v, mask, width) __shfl_xor_sync(0xffffffffu, (v), (mask), (width))
#endif

// The two IEEE halves packed in a 32-bit word (low half first) as floats, by the GPU's own conversion (one
// floating-point instruction each; bit arithmetic would load the integer pipe the weight decoders already fill).
#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
__device__ inline void moe_half2_to_floats(unsigned int bits, float& lo, float& hi) {
  typedef _Float16 moe_half2_t __attribute__((ext_vector_type(2)));
  const moe_half2_t h = __builtin_bit_cast(moe_half2_t, bits);
  lo = float(h.x);
  hi = float(h.y);
}
#else
#include <cuda_fp16.h>
__device__ inline void moe_half2_to_floats(unsigned int bits, float& lo, float& hi) {
  const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&bits));
  lo = f.x;
  hi = f.y;
}
#endif
