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
  bool operator==(const ConvolutionDims&) const = default;
};

// xla::DotDimensionNumbers.
struct DotDims {
  std::vector<std::int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
  bool operator==(const DotDims&) const = default;
};

struct Op {
  std::string name;
  std::string opcode;  // XLA spelling: "dot", "convolution", "add", "reduce", "parameter", ...
  Shape shape;
  // Reduce / broadcast / transpose / concatenate dimensions, as HloInstructionProto.dimensions.
  std::vector<std::int64_t> dimensions;
  std::optional<Window> window;
  std::optional<ConvolutionDims> convolution;
  std::optional<DotDims> dot;
  std::int64_t parameter_number = -1;  // for opcode "parameter"
  std::string fusion_kind;             // for opcode "fusion" ("kLoop", "kOutput", ...)
  // Called computations (reduce bodies, while loops, fused computations) stay attached to their
  // caller; a computation called from several places is shared.
  std::vector<std::shared_ptr<const Program>> called;

  bool is_parameter() const { return opcode == "parameter"; }
};

}  // namespace perftune
