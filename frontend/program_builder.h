#pragma once
// Emits ops of perftune's program IR with their shapes worked out, for a frontend that translates
// another format's ops into several IR ops each (an ONNX Gemm becomes a dot, a scale and a
// broadcast add). Every method checks its operands' shapes and throws std::invalid_argument with
// what was wrong; the frontend turns that into an InputError naming the node.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/program.h"

namespace perftune::frontend {

using Dims = std::vector<std::int64_t>;

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string name) : program_(std::move(name)) {}

  // Every op gets a unique name made from `hint` (the tensor or node it comes from).
  OpId parameter(const std::string& hint, const Dims& dims, bool weight, std::shared_ptr<const Literal> values = nullptr);
  OpId constant(const std::string& hint, const Dims& dims, std::shared_ptr<const Literal> values);
  OpId scalar(const std::string& hint, float value) { return constant(hint, {}, std::make_shared<Literal>(Literal{value})); }

  // Elementwise ops take operands of one shape (broadcast them first).
  OpId elementwise(const std::string& hint, const std::string& opcode, const std::vector<OpId>& operands);
  // Numpy-style multidirectional broadcast: the shape both `a` and `b` broadcast to.
  Dims broadcast_shape(const Dims& a, const Dims& b) const;
  // `x` broadcast to `dims` as numpy does (trailing dimensions aligned, size-1 ones stretched: the
  // IR's broadcast stretches them itself).
  OpId broadcast_to(const std::string& hint, OpId x, const Dims& dims);
  // An elementwise binary op with numpy broadcasting of both operands.
  OpId binary(const std::string& hint, const std::string& opcode, OpId a, OpId b);
  // Scalar `value` combined with `x` (value on the right unless `scalar_first`).
  OpId with_scalar(const std::string& hint, const std::string& opcode, OpId x, float value, bool scalar_first = false);

  OpId reshape(const std::string& hint, OpId x, const Dims& dims);  // same element count
  OpId transpose(const std::string& hint, OpId x, const Dims& permutation);  // output dim i = input dim perm[i]
  // Reduces `axes` away with `combine` ("add", "maximum", "minimum", "multiply").
  OpId reduce(const std::string& hint, OpId x, const Dims& axes, const std::string& combine);
  OpId dot(const std::string& hint, OpId lhs, OpId rhs, const DotDims& dims);
  OpId convolution(const std::string& hint, OpId input, OpId kernel, const ConvolutionDims& dims, const Window& window);
  // A window over every dimension of `x` (size, stride, pads, dilation one entry per dimension).
  OpId reduce_window(const std::string& hint, OpId x, const Window& window, const std::string& combine);
  OpId slice(const std::string& hint, OpId x, const SliceDims& slice, const Dims& out_dims);
  OpId pad(const std::string& hint, OpId x, const PadDims& padding, OpId scalar_value);
  OpId concatenate(const std::string& hint, const std::vector<OpId>& operands, std::int64_t axis);
  OpId gather(const std::string& hint, OpId x, std::int64_t axis, const Dims& index_dims, const std::vector<std::int64_t>& indices);

  // By value: adding an op may move every op (a reference would dangle).
  Dims dims(OpId id) const { return program_.op(id).shape.dims; }
  Program& program() { return program_; }
  std::int64_t parameter_count() const { return parameters_; }

 private:
  OpId add(const std::string& hint, Op op, const std::vector<OpId>& operands);
  std::string unique_name(const std::string& hint);
  std::shared_ptr<const Program> reducer_body(const std::string& combine);

  Program program_;
  std::int64_t parameters_ = 0;
  std::unordered_set<std::string> names_;
  std::vector<std::pair<std::string, std::shared_ptr<const Program>>> bodies_;
};

// Elements of a shape (1 for a scalar).
std::int64_t element_count(const Dims& dims);

}  // namespace perftune::frontend
