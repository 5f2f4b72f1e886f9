// Keeping data written by one thread off the cache lines another thread
// reads in a loop. A line shared that way moves between the cores on every
// write (false sharing): the writer's hot path once ran at ~21 ns per item
// instead of ~5 in some runs only, depending on where the heap happened to
// place the encoder's state next to the simulation thread's tables.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

namespace uscope {

// x86-64 and most AArch64 cores; std::hardware_destructive_interference_size
// would say the same but GCC warns that it may differ between compilations.
constexpr size_t kCacheLine = 64;

// An allocator whose blocks start on a cache line and fill whole lines, so
// that a vector of the producer's read-only tables shares no line with any
// other heap block.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U> &) noexcept {}
  T *allocate(size_t n) {
    if (n > (SIZE_MAX - kCacheLine) / sizeof(T)) throw std::bad_alloc();
    const size_t bytes = (n * sizeof(T) + kCacheLine - 1) / kCacheLine * kCacheLine;
    void *p = std::aligned_alloc(kCacheLine, bytes ? bytes : kCacheLine);
    if (!p) throw std::bad_alloc();
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t) noexcept { std::free(p); }
  template <class U>
  bool operator==(const CacheLineAllocator<U> &) const noexcept { return true; }
  template <class U>
  bool operator!=(const CacheLineAllocator<U> &) const noexcept { return false; }
};

}  // namespace uscope
