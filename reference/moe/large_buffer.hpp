// Scratch memory for the engine's large buffers. Fresh pages cost a kernel fault each (measured on the CI VM: a
// third of a prefill run went to zero-fills and 4 KiB page faults), so large blocks are 2 MiB aligned and ask for
// transparent huge pages (madvise mode is the Debian default), elements are default-initialised (no zero-fill of
// what is about to be overwritten), and the engine keeps its scratch per thread across calls (Workspace).
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

namespace moe {

template <class T>
struct LargeAllocator {
  using value_type = T;
  LargeAllocator() = default;
  template <class U> LargeAllocator(const LargeAllocator<U>&) {}
  T* allocate(std::size_t n) {
    constexpr std::size_t kHuge = std::size_t(2) << 20;
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) {
      void* p = std::malloc(bytes ? bytes : 1);
      if (!p) throw std::bad_alloc();
      return static_cast<T*>(p);
    }
    const std::size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    ::madvise(p, rounded, MADV_HUGEPAGE);  // advisory: without it the memory still works, only slower to touch
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U> void construct(U* p) { ::new (static_cast<void*>(p)) U; }  // default-init: no zero-fill
  template <class U, class... A> void construct(U* p, A&&... a) { ::new (static_cast<void*>(p)) U(std::forward<A>(a)...); }
  template <class U> bool operator==(const LargeAllocator<U>&) const { return true; }
};

template <class T>
using LargeVector = std::vector<T, LargeAllocator<T>>;

}  // namespace moe
