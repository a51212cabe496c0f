#pragma once
// What ONNX's structural ops do to a shape, worked out once from a node's attributes and known
// inputs, for both of their forms: translated into IR ops (ops_shape.cpp) and evaluated at import
// on known tensors (constant_folding.cpp).
#include <vector>

#include "frontend/node_context.h"

namespace perftune::frontend {

// Reshape's target from its shape input (0 copies the input's dimension unless allowzero; one -1
// is inferred).
Dims reshape_dims(NodeContext& c, const Dims& in);
Dims flatten_dims(NodeContext& c, const Dims& in);
Dims squeeze_dims(NodeContext& c, const Dims& in);
Dims unsqueeze_dims(NodeContext& c, const Dims& in);
Dims transpose_permutation(NodeContext& c, std::size_t rank);
// Expand's output: numpy broadcast of the input and the shape input.
Dims expand_dims(NodeContext& c, const Dims& in);

struct SliceSpec {
  SliceDims slice;
  Dims out;
};
// Slice from its attributes (opset < 10) or its starts, ends, axes and steps inputs, clamped as
// ONNX clamps them.
SliceSpec slice_spec(NodeContext& c, const Dims& in);

struct PadSpec {
  PadDims padding;
  float value = 0.0f;
};
// Pad in constant mode, its pads from the attribute (opset < 11) or input 1 and its value from the
// attribute or input 2.
PadSpec pad_spec(NodeContext& c, std::size_t rank);

// Gather's axis and its indices, known at import, made non-negative.
struct GatherSpec {
  std::int64_t axis = 0;
  Dims index_dims;
  std::vector<std::int64_t> indices;
};
GatherSpec gather_spec(NodeContext& c, const Dims& in);

// Split: each output's size along the axis.
struct SplitSpec {
  std::int64_t axis = 0;
  Dims sizes;
};
SplitSpec split_spec(NodeContext& c, const Dims& in);

}  // namespace perftune::frontend
