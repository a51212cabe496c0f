#pragma once
// Seeded randomness that gives the same sequence on every platform: std::mt19937_64 is fully
// specified by the standard, its distributions are not, so we draw from it with our own helpers.
#include <cstdint>
#include <random>

namespace perftune {

using Rng = std::mt19937_64;

// Uniform integer in [0, n), n > 0, without modulo bias.
inline std::uint64_t uniform_index(Rng& rng, std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t draw;
  do draw = rng(); while (draw >= limit);
  return draw % n;
}

// Uniform double in [0, 1) from the top 53 bits.
inline double uniform_unit(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace perftune
