#include "ir/shape.h"

#include <numeric>

namespace perftune {

std::int64_t Shape::element_count() const {
  if (element_type == ElementType::kTuple) {
    std::int64_t total = 0;
    for (const Shape& element : tuple_shapes) total += element.element_count();
    return total;
  }
  std::int64_t count = 1;
  for (std::int64_t d : dims) count *= d;
  return count;
}

std::int64_t Shape::byte_size() const {
  if (element_type == ElementType::kTuple) {
    std::int64_t total = 0;
    for (const Shape& element : tuple_shapes) total += element.byte_size();
    return total;
  }
  return element_count() * element_type_bytes(element_type);
}

std::vector<std::int64_t> Shape::layout() const {
  if (!minor_to_major.empty()) return minor_to_major;
  std::vector<std::int64_t> order(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) order[i] = static_cast<std::int64_t>(dims.size() - 1 - i);
  return order;
}

std::string Shape::to_string() const {
  if (element_type == ElementType::kTuple) {
    std::string text = "(";
    for (std::size_t i = 0; i < tuple_shapes.size(); ++i)
      text += (i ? ", " : "") + tuple_shapes[i].to_string();
    return text + ")";
  }
  std::string text(element_type_name(element_type));
  text += "[";
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  text += "]";
  if (!minor_to_major.empty()) {
    text += "{";
    for (std::size_t i = 0; i < minor_to_major.size(); ++i)
      text += (i ? "," : "") + std::to_string(minor_to_major[i]);
    text += "}";
  }
  return text;
}

std::optional<std::string> dimension_problem(std::int64_t dimension) {
  if (dimension >= 0 && dimension <= kMaxDimension) return std::nullopt;
  return "a dimension in [0, 2^32 = " + std::to_string(kMaxDimension) + "], not " + std::to_string(dimension);
}

std::optional<std::string> shape_problem(const Shape& shape) {
  for (std::size_t i = 0; i < shape.tuple_shapes.size(); ++i)
    if (auto problem = shape_problem(shape.tuple_shapes[i])) return "tuple element " + std::to_string(i) + ": " + *problem;
  std::int64_t count = 1;
  for (std::size_t d = 0; d < shape.dims.size(); ++d) {
    if (auto problem = dimension_problem(shape.dims[d])) return "dimension " + std::to_string(d) + ": " + *problem;
    // Compared before multiplying: 2^40 * 2^32 would overflow int64.
    if (shape.dims[d] > 0 && count > kMaxElementCount / shape.dims[d])
      return "a shape of at most 2^40 = " + std::to_string(kMaxElementCount) + " elements (" + shape.to_string() + " has more)";
    count *= shape.dims[d];
  }
  return std::nullopt;
}

Shape make_shape(ElementType type, std::vector<std::int64_t> dims) {
  Shape shape;
  shape.element_type = type;
  shape.dims = std::move(dims);
  return shape;
}

}  // namespace perftune
