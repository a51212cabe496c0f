#include "export/tensor_arena.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace perftune {

TensorArena plan_tensor_arena(const std::vector<TensorLifetime>& tensors, std::size_t alignment) {
  const auto rounded = [&](std::size_t bytes) { return (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment; };
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tensors[a].bytes > tensors[b].bytes; });
  TensorArena arena;
  arena.offsets.assign(tensors.size(), 0);
  std::vector<std::size_t> placed;
  for (std::size_t t : order) {
    const TensorLifetime& life = tensors[t];
    std::vector<std::pair<std::size_t, std::size_t>> taken;  // [begin, end) of placed tensors alive with it
    for (std::size_t other : placed)
      if (tensors[other].first <= life.last && life.first <= tensors[other].last)
        taken.emplace_back(arena.offsets[other], arena.offsets[other] + rounded(tensors[other].bytes));
    std::sort(taken.begin(), taken.end());
    std::size_t at = 0;
    for (const auto& [begin, end] : taken) {
      if (begin >= at + rounded(life.bytes)) break;  // it fits in the gap before this one
      at = std::max(at, end);
    }
    arena.offsets[t] = at;
    arena.bytes = std::max(arena.bytes, at + rounded(life.bytes));
    placed.push_back(t);
  }
  return arena;
}

}  // namespace perftune
