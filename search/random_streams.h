#pragma once
// Independent, reproducible random streams: one per (seed, round, chain/child, ...), so parallel
// chains draw the same numbers whatever thread runs them and however many threads there are.
#include <cstdint>
#include <initializer_list>

#include "ir/random.h"

namespace perftune {

// A generator seeded from an ordered list of identifiers, e.g. {seed, round, chain}.
inline Rng stream_rng(std::initializer_list<std::uint64_t> ids) {
  std::uint64_t state = 0x243f6a8885a308d3ull;  // pi's fraction bits: any fixed non-zero start works
  for (std::uint64_t id : ids) state = splitmix64(state ^ splitmix64(id));
  return Rng(state);
}

}  // namespace perftune
