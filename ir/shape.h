#pragma once
// An array shape: element type, dimensions and layout (minor-to-major, as XLA writes it).
#include <cstdint>
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

// Convenience for hand-written programs and tests.
Shape make_shape(ElementType type, std::vector<std::int64_t> dims);

}  // namespace perftune
