#pragma once
// Independent, reproducible random streams: one per (seed, round, chain/child, ...), so parallel
// chains draw the same numbers whatever thread runs them and however many threads there are.
#include <cstdint>
#include <initializer_list>

#include "ir/random.h"

namespace perftune {

// SplitMix64's finalizer (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): a bijective mix, so distinct inputs give unrelated outputs.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A generator seeded from an ordered list of identifiers, e.g. {seed, round, chain}.
inline Rng stream_rng(std::initializer_list<std::uint64_t> ids) {
  std::uint64_t state = 0x243f6a8885a308d3ull;  // pi's fraction bits: any fixed non-zero start works
  for (std::uint64_t id : ids) state = mix64(state ^ mix64(id));
  return Rng(state);
}

}  // namespace perftune
