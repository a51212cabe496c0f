#pragma once
// An array shape: element type, dimensions and layout (minor-to-major, as XLA writes it).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/element_type.h"

namespace perftune {

struct Shape {
  ElementType element_type = ElementType::kF32;
  std::vector<std::int64_t> dims;
  // Physical order, fastest-varying dimension first; empty means the default row-major layout.
  std::vector<std::int64_t> minor_to_major;
  std::vector<Shape> tuple_shapes;  // only for ElementType::kTuple

  // Product of dims (1 for a scalar); for a tuple, the sum over its elements.
  std::int64_t element_count() const;
  std::int64_t byte_size() const;
  // minor_to_major if set, else row-major: {rank-1, ..., 0}.
  std::vector<std::int64_t> layout() const;
  std::string to_string() const;  // "f32[128,256]{1,0}"

  bool operator==(const Shape&) const = default;
};

// The largest dimension perftune accepts: 2^32 (XLA's own shapes are int64, but no real tensor
// dimension comes near: TpuGraphs' largest is below 2^24). It keeps every loop over a dimension's
// tile values (powers of two up to it) and every index finite: 2^62 made `tune` double past int64.
inline constexpr std::int64_t kMaxDimension = std::int64_t{1} << 32;
// The most elements one shape may hold: 2^40 (4 TiB of f32, beyond any accelerator's memory), so
// a byte size (x16 at most) stays far inside int64.
inline constexpr std::int64_t kMaxElementCount = std::int64_t{1} << 40;

// The one definition of a valid dimension (0 <= d <= kMaxDimension) and shape (valid dimensions,
// at most kMaxElementCount elements, tuple elements likewise), applied by every importer and
// reader of programs (program JSON, XLA protos, TpuGraphs npz, Kernel Tuner problem sizes, record
// logs). Empty when valid; else what was expected, for InputError.
std::optional<std::string> dimension_problem(std::int64_t dimension);
std::optional<std::string> shape_problem(const Shape& shape);

// Convenience for hand-written programs and tests.
Shape make_shape(ElementType type, std::vector<std::int64_t> dims);

}  // namespace perftune
