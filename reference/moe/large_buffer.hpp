// Scratch memory for the engine's large buffers: huge-page allocation (fixtures/large_alloc.hpp), elements
// default-initialised (no zero-fill of what is about to be overwritten); the engine keeps its scratch per thread
// across calls.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include "fixtures/large_alloc.hpp"

namespace moe {

template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U> LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(allocate_large(n * sizeof(T))); }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U> void construct(U* p) { ::new (static_cast<void*>(p)) U; }  // default-init: no zero-fill
  template <class U, class... A> void construct(U* p, A&&... a) { ::new (static_cast<void*>(p)) U(std::forward<A>(a)...); }
  template <class U> bool operator==(const LargeAllocator<U>&) const { return true; }
};

template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

}  // namespace moe
