#pragma once
// One operation of a tensor program, with the attributes that decide its cost.
// Any opcode string is accepted: XLA has ~120 and grows; features map rare ones to "other".
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace perftune {

class Program;

// One entry per spatial dimension, as xla::Window.
struct Window {
  std::vector<std::int64_t> size, stride, pad_low, pad_high, window_dilation, base_dilation;
  bool operator==(const Window&) const = default;
};

// Which dimension plays which role in a convolution (xla::ConvolutionDimensionNumbers).
struct ConvolutionDims {
  std::int64_t input_batch = 0, input_feature = 1;
  std::vector<std::int64_t> input_spatial;
  std::int64_t kernel_input_feature = 0, kernel_output_feature = 1;
  std::vector<std::int64_t> kernel_spatial;
  std::int64_t output_batch = 0, output_feature = 1;
  std::vector<std::int64_t> output_spatial;
  // Input and output features split into this many groups, each convolved on its own
  // (xla::HloInstructionProto.feature_group_count): the kernel's input features are the input's
  // divided by it, and a depthwise convolution has one group per input feature.
  std::int64_t feature_group_count = 1;
  bool operator==(const ConvolutionDims&) const = default;
};

// xla::DotDimensionNumbers.
struct DotDims {
  std::vector<std::int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
  bool operator==(const DotDims&) const = default;
};

// A strided window of the operand (opcode "slice"): output index i along dimension d reads the
// operand at start[d] + i * stride[d]. The output shape gives the count; a negative stride walks
// backwards (ONNX's Slice allows it, XLA's does not).
struct SliceDims {
  std::vector<std::int64_t> start, stride;
  bool operator==(const SliceDims&) const = default;
};

// Edge padding (opcode "pad", operands: the tensor and a scalar padding value), per dimension.
struct PadDims {
  std::vector<std::int64_t> low, high;
  bool operator==(const PadDims&) const = default;
};

using Literal = std::vector<float>;

struct Op {
  std::string name;
  std::string opcode;  // XLA spelling: "dot", "convolution", "add", "reduce", "parameter", ...
  Shape shape;
  // Reduce / broadcast / transpose / concatenate dimensions, as HloInstructionProto.dimensions.
  std::vector<std::int64_t> dimensions;
  std::optional<Window> window;
  std::optional<ConvolutionDims> convolution;
  std::optional<DotDims> dot;
  std::optional<SliceDims> slice;
  std::optional<PadDims> padding;
  // "gather": the constant indices into dimension dimensions[0] of the operand, row-major; the
  // output's shape says how they are laid out (operand dims before the axis, the indices' dims,
  // operand dims after it).
  std::vector<std::int64_t> indices;
  // "constant": its values, row-major (required). A parameter that is a weight may carry its
  // values too (an imported network's initializers), for checks and export; JSON programs keep
  // only the weight flag.
  std::shared_ptr<const Literal> literal;
  bool weight = false;  // a parameter that holds trained values rather than an activation
  std::int64_t parameter_number = -1;  // for opcode "parameter"
  std::string fusion_kind;             // for opcode "fusion" ("kLoop", "kOutput", ...)
  // Called computations (reduce bodies, while loops, fused computations) stay attached to their
  // caller; a computation called from several places is shared.
  std::vector<std::shared_ptr<const Program>> called;

  bool is_parameter() const { return opcode == "parameter"; }
  bool is_constant() const { return opcode == "constant"; }
  // Not work of a kernel: a parameter is an input, a constant with its values is copied into each
  // kernel reading it. (An XLA module's constants come without values and stay ordinary ops, so
  // the fusion spaces of recorded programs are what they were.)
  bool is_leaf_value() const { return is_parameter() || (is_constant() && literal); }
};

}  // namespace perftune
