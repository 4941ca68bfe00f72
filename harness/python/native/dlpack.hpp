// The DLPack C ABI (https://dmlc.github.io/dlpack/latest/c_api.html), the unversioned DLManagedTensor that travels
// in a PyCapsule named "dltensor" (a consumer renames it "used_dltensor"): what torch 1.13 and later, NumPy 1.22
// and later, CuPy and JAX exchange. Only the declarations this module uses, laid out as dlpack.h lays them out.
#pragma once
#include <cstdint>

namespace moe::python::dlpack {

enum DeviceType : std::int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLROCM = 10, kDLROCMHost = 11 };

struct Device {
  std::int32_t device_type;
  std::int32_t device_id;
};

enum TypeCode : std::uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 };

struct DataType {
  std::uint8_t code, bits;
  std::uint16_t lanes;
};

struct DLTensor {
  void* data;
  Device device;
  std::int32_t ndim;
  DataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; nullptr: row-major
  std::uint64_t byte_offset;
};

struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

inline constexpr const char* kCapsuleName = "dltensor";
inline constexpr const char* kUsedCapsuleName = "used_dltensor";

}  // namespace moe::python::dlpack
