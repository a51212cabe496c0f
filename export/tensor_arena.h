#pragma once
// Where a program's intermediate tensors live in one block of memory: tensors that are never
// needed at the same time share bytes, so the working set of a run stays small and warm in cache.
// The plan is TFLite's greedy-by-size arena plan: the largest tensor first, each at the lowest
// offset that overlaps no tensor placed before it whose lifetime meets its own.
#include <cstddef>
#include <vector>

namespace perftune {

struct TensorLifetime {
  std::size_t first = 0, last = 0;  // the steps that write it first and read it last (inclusive)
  std::size_t bytes = 0;
};

struct TensorArena {
  std::vector<std::size_t> offsets;  // per tensor, in the order given; multiples of `alignment`
  std::size_t bytes = 0;             // the block's size, a multiple of `alignment`
};

TensorArena plan_tensor_arena(const std::vector<TensorLifetime>& tensors, std::size_t alignment);

}  // namespace perftune
