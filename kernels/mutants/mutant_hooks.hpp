// The mutant catalog's hooks in the GPU kernels. kernels/mutants/fused_moe_mutants.hip defines MOE_GPU_MUTANTS and
// compiles kernels/moe/fused_moe.hip again: there MOE_MUT(m) tests the bug the launch carries, read from a copy of
// the launch's MutantLaunch in constant memory (device code) or in a host variable (the launcher), both set by
// launch_fused_moe_mutant before its first kernel; in the default build every MOE_MUT(...) is the constant false
// and its code is gone.
#pragma once
#include "kernels/mutants/gpu_mutant_launch.hpp"
#include "kernels/mutants/mutation_id.hpp"

#ifdef MOE_GPU_MUTANTS
namespace moe::gpu {
namespace {
__constant__ MutantLaunch g_mutant_device;  // the launch's bug, as the mutant kernels read it
MutantLaunch g_mutant_host;                 // the same, as the mutant launcher reads it
bool g_mutant_device_set = false;           // whether g_mutant_device holds g_mutant_host
}  // namespace
}  // namespace moe::gpu
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define MOE_MUTANT_STATE (::moe::gpu::g_mutant_device)
#else
#define MOE_MUTANT_STATE (::moe::gpu::g_mutant_host)
#endif
#define MOE_MUT(m) (MOE_MUTANT_STATE.mutation == int(::moe::Mutation::m))
#define MOE_MUT_EXPERT (MOE_MUTANT_STATE.expert)
#define MOE_MUT_TENSOR_SCALE (MOE_MUTANT_STATE.tensor_scale)
#define MOE_MUT_X_ROWS (MOE_MUTANT_STATE.x_rows)
#define MOE_LAUNCH_FUSED_MOE launch_fused_moe_mutant
// default_stream_launch: every launch on the legacy default stream, whatever stream the kernel was given.
#define MOE_LAUNCH_STREAM \
  (MOE_MUT(default_stream_launch) ? hipStream_t(nullptr) : static_cast<hipStream_t>(::moe::gpu::launch_stream()))
#else
#define MOE_MUT(m) false
#define MOE_MUT_EXPERT std::int64_t(-1)
#define MOE_MUT_TENSOR_SCALE 0.0f
#define MOE_MUT_X_ROWS std::int64_t(0)
#define MOE_LAUNCH_FUSED_MOE launch_fused_moe
#endif
