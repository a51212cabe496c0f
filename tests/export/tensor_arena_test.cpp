// The exported library's intermediates share one arena: tensors never alive together share bytes,
// tensors alive together never overlap.
#include "export/tensor_arena.h"

#include <random>

#include "test_support.h"

namespace perftune {
namespace {

bool overlap(const TensorArena& arena, const std::vector<TensorLifetime>& t, std::size_t a, std::size_t b, std::size_t alignment) {
  const auto end = [&](std::size_t i) { return arena.offsets[i] + (t[i].bytes + alignment - 1) / alignment * alignment; };
  return arena.offsets[a] < end(b) && arena.offsets[b] < end(a);
}

TEST_CASE("a chain's tensors two steps apart share bytes, and neighbours do not") {
  // a -> t0 -> b -> t1 -> c -> t2 -> d: t0 and t2 are never alive together.
  const std::vector<TensorLifetime> chain{{0, 1, 1000}, {1, 2, 600}, {2, 3, 1000}};
  const TensorArena arena = plan_tensor_arena(chain, 64);
  REQUIRE(arena.offsets[0] == arena.offsets[2]);
  REQUIRE_FALSE(overlap(arena, chain, 0, 1, 64));
  REQUIRE_FALSE(overlap(arena, chain, 1, 2, 64));
  REQUIRE(arena.bytes == 1024 + 640);
  for (std::size_t offset : arena.offsets) REQUIRE(offset % 64 == 0);
}

TEST_CASE("random lifetimes never overlap while alive, and need no more than their sum") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<TensorLifetime> tensors(30);
    std::size_t sum = 0;
    for (TensorLifetime& t : tensors) {
      t.first = rng() % 20;
      t.last = t.first + rng() % 6;
      t.bytes = 1 + rng() % 5000;
      sum += (t.bytes + 63) / 64 * 64;
    }
    const TensorArena arena = plan_tensor_arena(tensors, 64);
    REQUIRE(arena.bytes <= sum);
    for (std::size_t a = 0; a < tensors.size(); ++a) {
      REQUIRE(arena.offsets[a] + tensors[a].bytes <= arena.bytes);
      for (std::size_t b = a + 1; b < tensors.size(); ++b)
        if (tensors[a].first <= tensors[b].last && tensors[b].first <= tensors[a].last) {
          CAPTURE(trial, a, b);
          REQUIRE_FALSE(overlap(arena, tensors, a, b, 64));
        }
    }
  }
}

}  // namespace
}  // namespace perftune
