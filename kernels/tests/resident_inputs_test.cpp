#include "kernels/common/resident_inputs.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "fixtures/content_seal.hpp"

namespace moe {
namespace {

// A fake device: a "device copy" is the bytes as they were at upload time, so a stale copy shows as old bytes.
struct FakeBuffer {
  std::vector<std::byte> bytes;
  DType dtype = DType::f32;
};
FakeBuffer fake_upload(const Tensor& t) { return {{t.bytes(), t.bytes() + t.nbytes()}, t.dtype()}; }

// What the kernel sees on the device for `t`, going through the cache the way the GPU kernel does: digest now, then use.
const FakeBuffer& device_view(ResidentInputs<FakeBuffer>& r, std::size_t slot, const Tensor& t) {
  const std::uint64_t d = chunk_digests({&t})[0];
  return *r.use(slot, t, d, fake_upload);
}
bool same(const FakeBuffer& b, const Tensor& t) {
  return b.dtype == t.dtype() && b.bytes.size() == t.nbytes() && std::memcmp(b.bytes.data(), t.bytes(), t.nbytes()) == 0;
}
Tensor filled(const char* name, std::int64_t n, float v) {
  Tensor t(name, DType::f32, {n});
  for (float& x : t.span<float>()) x = v;
  return t;
}

}  // namespace

TEST(ResidentInputs, SameContentIsUploadedOnceEvenFromAnotherClone) {
  ResidentInputs<FakeBuffer> r;
  const Tensor a = filled("w13", 3000, 1.5f);
  EXPECT_TRUE(same(device_view(r, 0, a), a));
  EXPECT_TRUE(same(device_view(r, 0, a), a));   // the probes' reruns
  const Tensor b = a.clone();                   // the next case's working clone of the same weights
  EXPECT_TRUE(same(device_view(r, 0, b), b));
  EXPECT_EQ(r.uploads(), 1u);
}

TEST(ResidentInputs, TensorChangedInPlaceIsUploadedAgain) {
  // Same address, same size, one element changed: a cache keyed by address or size would hand the old bytes.
  ResidentInputs<FakeBuffer> r;
  Tensor a = filled("x", 3000, 1.0f);
  device_view(r, 0, a);
  a.span<float>()[2999] = 2.0f;
  EXPECT_TRUE(same(device_view(r, 0, a), a));
  a.span<float>()[7] = 0.0f;
  EXPECT_TRUE(same(device_view(r, 0, a), a));
  a.span<float>()[7] = -0.0f;  // equal as a value, one sign bit apart: a value comparison would reuse the old copy
  EXPECT_TRUE(same(device_view(r, 0, a), a));
  EXPECT_EQ(r.uploads(), 4u);
}

TEST(ResidentInputs, DtypeOrShapeChangeIsUploadedAgain) {
  ResidentInputs<FakeBuffer> r;
  Tensor a("w2", DType::e4m3fn, {4, 8});
  device_view(r, 0, a);
  a.reinterpret(DType::e4m3fnuz);  // a prepare() that converts flavour keeps the bytes but not their meaning
  EXPECT_TRUE(same(device_view(r, 0, a), a));
  const Tensor b("w2", DType::e4m3fnuz, {8, 4});
  EXPECT_TRUE(same(device_view(r, 0, b), b));
  EXPECT_EQ(r.uploads(), 3u);
}

TEST(ResidentInputs, SlotsAreIndependentAndEmptyReleases) {
  ResidentInputs<FakeBuffer> r;
  const Tensor a = filled("w13", 10, 1.0f), b = filled("w2", 10, 1.0f);  // equal content, different slots
  EXPECT_TRUE(same(device_view(r, 0, a), a));
  EXPECT_TRUE(same(device_view(r, 1, b), b));
  EXPECT_EQ(r.uploads(), 2u);
  EXPECT_EQ(r.use(1, Tensor(), 0, fake_upload), nullptr);  // a case without this tensor (no biases)
  device_view(r, 1, b);
  EXPECT_EQ(r.uploads(), 3u);
  r.clear();
  device_view(r, 0, a);
  EXPECT_EQ(r.uploads(), 4u);
}

TEST(ResidentInputs, FailedUploadNeverLeavesTheOldCopyUnderTheNewKey) {
  ResidentInputs<FakeBuffer> r;
  Tensor a = filled("x", 100, 1.0f);
  device_view(r, 0, a);
  a.span<float>()[5] = 3.0f;
  const std::uint64_t d = chunk_digests({&a})[0];
  EXPECT_THROW(r.use(0, a, d, [](const Tensor&) -> FakeBuffer { throw std::runtime_error("out of device memory"); }),
               std::runtime_error);
  a.span<float>()[5] = 1.0f;                    // back to the content of the copy the failed upload replaced
  EXPECT_TRUE(same(device_view(r, 0, a), a));  // uploads again: the slot holds nothing after the failure
  EXPECT_EQ(r.uploads(), 2u);
}

}  // namespace moe
