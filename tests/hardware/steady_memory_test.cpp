// The runners' memory policy: a large block freed by one call of a kernel is reused by the next
// without page faults (hardware/timing/steady_memory.h).
#include "hardware/timing/steady_memory.h"

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

#include "test_support.h"

namespace perftune {
namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Page faults of one "call": allocate a block, write all of it, free it.
long faults_of_one_call(std::size_t bytes) {
  const long before = minor_faults();
  auto* block = static_cast<char*>(std::malloc(bytes));
  REQUIRE(block != nullptr);
  std::memset(block, 1, bytes);
  asm volatile("" : : "r"(block) : "memory");  // the writes happen: the compiler may not drop the block
  std::free(block);
  return minor_faults() - before;
}

TEST_CASE("a freed 64 MB block is reused by the next call without page faults, and released between configs over a threshold", "[memory]") {
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  constexpr long kPages = static_cast<long>(kBytes / 4096);
  // glibc's default: a block this large is mapped fresh on every call, every page faulted again.
  CHECK(faults_of_one_call(kBytes) > kPages / 2);
  CHECK(faults_of_one_call(kBytes) > kPages / 2);
  reuse_freed_memory();
  faults_of_one_call(kBytes);  // the warm-up pays them
  CHECK(faults_of_one_call(kBytes) < kPages / 20);
  CHECK(faults_of_one_call(kBytes) < kPages / 20);
  // Between configs a small free total stays (a compile's heap is reused by the next) ...
  release_freed_memory(2 * kBytes);
  CHECK(faults_of_one_call(kBytes) < kPages / 20);
  // ... and a large one goes back: the next config's first call faults again.
  release_freed_memory(kBytes / 2);
  CHECK(faults_of_one_call(kBytes) > kPages / 2);
}

}  // namespace
}  // namespace perftune
