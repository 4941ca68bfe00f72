// MOE_HOST_DEVICE marks a function that host code and GPU kernels both call (the format table's accessors, the
// device numerics). Plain C++ translation units see nothing.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define MOE_HOST_DEVICE __host__ __device__
#else
#define MOE_HOST_DEVICE
#endif
