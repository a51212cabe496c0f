#pragma once
// The memory a kernel frees is reused by its next call, as a framework's arena reuses it (XLA's
// allocator, a Halide AOT pipeline's caller): the runners time a kernel's calls, not the page
// faults of memory fresh from the system.
//
// glibc serves a large block with mmap and unmaps it on free (or trims the heap's top), so each
// call of a pipeline whose schedule computes a large stage at root touches fresh pages again: on
// this machine's volumes the page faults took many times the kernel's arithmetic, and a
// schedule's time measured the allocator, not the schedule. With no mmap and no automatic trim,
// the first call (the warm-up) pays the faults and later calls reuse the same pages.
#include <malloc.h>

#include <climits>
#include <cstddef>

namespace perftune {

// At the runner's start.
inline void reuse_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

// Free memory over this is handed back after a request. Below it, what a compile frees (LLVM's
// tens of MB) stays for the next one: trimming after every request made each compile fault its
// heap in again, 30% of a small kernel's measuring time.
inline constexpr std::size_t kReleaseFreedAboveBytes = std::size_t{256} << 20;

// After each request: hand back a config's large peak, so it does not stay in the process (the
// worker's memory limit applies to the next config as to a fresh process).
inline void release_freed_memory(std::size_t above_bytes = kReleaseFreedAboveBytes) {
  if (mallinfo2().fordblks > above_bytes) malloc_trim(0);
}

}  // namespace perftune
