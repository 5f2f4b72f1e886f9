// Transparent huge pages for big buffers that are streamed through, where
// the system gives them on request (Linux THP in "madvise" or "always"
// mode). Used for the exporters' output blocks (export/export.cpp
// OutFile): each O_DIRECT write pins its block's pages in the kernel, 1,024
// small pages per 4 MiB, and the encoders' copies into a block miss the TLB
// every 4 KiB. It is advice only: where it is not taken, nothing else
// changes. (The writer's queue was tried too: the demo testbench's traced
// CPU went up, +45% -> +50% over untraced, so it stays in small pages.)
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace uscope {

// A huge page on x86-64 and on arm64 with 4 KiB pages: buffers that want
// them are aligned to it.
inline constexpr size_t kHugePage = size_t{2} << 20;

// Asks for huge pages over [p, p + n) (p aligned to kHugePage); ignores a
// refusal.
inline void advise_huge_pages(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  (void)::madvise(p, n, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace uscope
