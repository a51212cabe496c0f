#pragma once
// Small builders for hand-written kernels in the surrogate tests.
#include <string>
#include <utility>
#include <vector>

#include "ir/op.h"

namespace perftune::test {

inline Op make_op(std::string name, std::string opcode, Shape shape) {
  Op op;
  op.name = std::move(name);
  op.opcode = std::move(opcode);
  op.shape = std::move(shape);
  return op;
}

inline Op parameter(std::string name, int number, Shape shape) {
  Op op = make_op(std::move(name), "parameter", std::move(shape));
  op.parameter_number = number;
  return op;
}

// f32 array, optionally with a layout (minor_to_major).
inline Shape f32(std::vector<std::int64_t> dims, std::vector<std::int64_t> minor_to_major = {}) {
  Shape shape = make_shape(ElementType::kF32, std::move(dims));
  shape.minor_to_major = std::move(minor_to_major);
  return shape;
}

}  // namespace perftune::test
