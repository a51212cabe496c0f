#pragma once
// Remembered validity for spaces whose constraint is expensive. A fusion space's constraint
// partitions the program and looks for cycles (hardware/halide/fusion_space.h) on every mutation a
// search tries; annealing chains and evolution's children keep returning to the same
// partitions, within a round and across rounds, so each answer is worth keeping.
#include <cstddef>

#include "ir/search_space.h"

namespace perftune {

// Entries kept before a shard of the cache is cleared: 2^18 answers of a 35-knob fusion space are
// ~90 MB (the config's values + the hash node each), several rounds of the default annealing.
inline constexpr std::size_t kLegalityCacheEntries = std::size_t{1} << 18;

// The same space (knobs, valid configs, sampling) with contains() answered from a cache shared by
// every copy of the result; safe to call from parallel chains. A recorded space is returned as it
// is (its check is already a lookup).
SearchSpace with_legality_cache(const SearchSpace& space, std::size_t capacity = kLegalityCacheEntries);

}  // namespace perftune
