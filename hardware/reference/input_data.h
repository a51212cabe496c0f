#pragma once
// The deterministic input data of a CPU measurement. The runner child (which fills the real
// buffers) and the reference interpreter (which checks them) both call this, so they agree
// without copying megabytes between processes. Header-only: the runner links nothing else.
#include <cstddef>
#include <cstdint>

#include "ir/random.h"

namespace perftune {


// Element `i` of parameter `parameter` (of `count` elements): uniform in [-1, 1), which keeps
// sums, products and exponentials of the bundled programs well inside f32 range. A scalar
// parameter (count 1) is a scale factor (1/n in a mean, an init value) and lies in [0.5, 1), so
// that a variance computed with it stays positive for rsqrt.
inline float input_value(std::uint64_t seed, std::size_t parameter, std::size_t i, std::size_t count) {
  const std::uint64_t bits = splitmix64(seed ^ (static_cast<std::uint64_t>(parameter) << 40) ^ i) >> 40;
  const float unit = static_cast<float>(bits) * (1.0f / 16777216.0f);  // 24 bits: exact in f32
  return count == 1 ? 0.5f + 0.5f * unit : 2.0f * unit - 1.0f;
}

}  // namespace perftune
