// The device copies a GPU kernel keeps of its input tensors between the run() calls of one case (the verdict run and
// the probes' reruns), so each tensor crosses to the device once per case instead of once per run.
//
// Keyed by content, never by address: a slot's copy is reused only when the tensor handed now has the chunk digest
// (fixtures/content_seal.hpp: dtype, shape and every byte) of the tensor that was uploaded into it. A different case,
// a tensor changed in place, a new working clone at a reused address, or a prepare() that converted the tensor all
// give another digest, so the slot uploads again; an empty tensor releases its slot. At most one copy per slot, so a
// kernel holds one case's inputs between runs. The GPU kernel clears them in prepare(), when the next case starts: a
// kernel that wrote into its own device inputs (a bug the probes' reruns then see) never carries that into another
// case's verdict. Plain C++ over any buffer type, so the keying is unit-tested on the
// host with a fake device (kernels/tests/resident_inputs_test.cpp); the GPU kernel instantiates it with GuardedBuffer.
#pragma once
#include <cstdint>
#include <vector>

#include "fixtures/tensor.hpp"

namespace moe {

template <class Buffer>
class ResidentInputs {
 public:
  explicit ResidentInputs(std::size_t slots = 0) : slots_(slots) {}
  // The device copy of `t` for `slot`, whose digest the caller computed from t now; `upload(t)` makes a new copy
  // (returns a Buffer) only when the slot is empty or holds other content. Empty tensors hold no copy.
  template <class Upload>
  const Buffer* use(std::size_t slot, const Tensor& t, std::uint64_t digest, Upload&& upload) {
    if (slot >= slots_.size()) slots_.resize(slot + 1);
    Slot& s = slots_[slot];
    if (t.empty()) {
      s = Slot{};
      return nullptr;
    }
    if (!s.held || s.digest != digest) {
      s.held = false;        // a failed upload leaves the slot empty: the next use uploads, whatever its digest
      s.buffer = Buffer{};   // the old copy goes before the new one is allocated: one copy per slot at any time
      s.buffer = upload(t);
      s.digest = digest;
      s.held = true;
      ++uploads_;
    }
    return &s.buffer;
  }
  // fn(buffer) for every copy held (the GPU kernel checks their guards after a run).
  template <class Fn>
  void for_each(Fn&& fn) {
    for (Slot& s : slots_)
      if (s.held) fn(s.buffer);
  }
  void clear() {
    for (Slot& s : slots_) s = Slot{};
  }
  std::size_t uploads() const { return uploads_; }  // copies made so far (the tests and the upload count)
  bool holds_any() const {
    for (const Slot& s : slots_)
      if (s.held) return true;
    return false;
  }

 private:
  struct Slot {
    bool held = false;
    std::uint64_t digest = 0;
    Buffer buffer{};
  };
  std::vector<Slot> slots_;
  std::size_t uploads_ = 0;
};

}  // namespace moe
