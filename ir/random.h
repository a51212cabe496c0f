#pragma once
// Seeded randomness that gives the same sequence on every platform: std::mt19937_64 is fully
// specified by the standard, its distributions are not, so we draw from it with our own helpers.
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace perftune {

using Rng = std::mt19937_64;

// SplitMix64's finalizer (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
// OOPSLA 2014): a bijective 64-bit mix, so distinct inputs give unrelated outputs. Seeds streams
// (search/random_streams.h) and the CPU backend's deterministic input data.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Uniform integer in [0, n), n > 0, without modulo bias.
inline std::uint64_t uniform_index(Rng& rng, std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t draw;
  do draw = rng(); while (draw >= limit);
  return draw % n;
}

// Fisher-Yates on uniform_index: a seed gives the same order on every platform (std::shuffle's
// is unspecified).
template <typename T>
void shuffle_in_place(std::vector<T>& items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[uniform_index(rng, i)]);
}

// Uniform double in [0, 1) from the top 53 bits.
inline double uniform_unit(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace perftune
