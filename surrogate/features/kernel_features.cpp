#include "surrogate/features/kernel_features.h"

#include <algorithm>
#include <cmath>

namespace perftune {

namespace {

float log_feature(double value) { return static_cast<float>(std::log2(1.0 + std::max(0.0, value))) * kLogScale; }

// Column offsets of kNodeFeatureWidth, in order.
enum Column : std::size_t {
  kDims = 0,                             // log2(1 + dim_d), d < 6
  kRank = kDims + kMaxFeatureRank,       // rank / 6
  kDimSum,                               // log2(1 + sum of dims)
  kElements,                             // log2(1 + product of dims)
  kElementType,                          // one-hot over xla::PrimitiveType numbers 0..18
  kLayout = kElementType + 19,           // position of dim d in minor_to_major / (rank - 1)
  kDefaultLayout = kLayout + kMaxFeatureRank,
  kReduceDims,                           // multi-hot of HloInstructionProto.dimensions
  kReduceDimCount = kReduceDims + kMaxFeatureRank,
  kWindowSize,                           // log2 window size, first 3 spatial dims
  kWindowStride = kWindowSize + 3,
  kWindowPadding = kWindowStride + 3,
  kWindowDilated,
  kIsConvolution,
  kConvInputFeatures,
  kConvOutputFeatures,
  kConvKernelSpatial,
  kIsDot,
  kDotContraction,
  kDotBatch,
  kDotContractingDims,
  kFlops,
  kBytes,
  kIntensity,
  kIsParameter,
  kIsRoot,
  kFanIn,
  kFanOut,
  kCalledSize,
  kEnd,
};
static_assert(kEnd == kNodeFeatureWidth, "update kNodeFeatureWidth (and kFeatureSchemaVersion) with the columns");

const Shape& array_shape(const Shape& shape) {
  return shape.element_type == ElementType::kTuple && !shape.tuple_shapes.empty() ? array_shape(shape.tuple_shapes.front())
                                                                                : shape;
}

double dim_or_one(const Shape& shape, std::int64_t d) {
  const Shape& s = array_shape(shape);
  return d >= 0 && static_cast<std::size_t>(d) < s.dims.size() ? static_cast<double>(s.dims[d]) : 1.0;
}

// Multiply-adds counted as 2 FLOPs, as XLA's HloCostAnalysis does.
double op_flops(const Program& body, OpId id) {
  const Op& op = body.op(id);
  const double out = static_cast<double>(op.shape.element_count());
  const auto operands = body.operands(id);
  if (op.dot && !operands.empty()) {
    double contraction = 1.0;
    for (std::int64_t d : op.dot->lhs_contracting) contraction *= dim_or_one(body.op(operands[0]).shape, d);
    return 2.0 * out * contraction;
  }
  if (op.convolution && operands.size() >= 2) {
    const Shape& kernel = body.op(operands[1]).shape;
    double per_output = dim_or_one(kernel, op.convolution->kernel_input_feature);
    for (std::int64_t d : op.convolution->kernel_spatial) per_output *= dim_or_one(kernel, d);
    return 2.0 * out * per_output;
  }
  if (op.opcode == "reduce" || op.opcode == "reduce-window") {
    double in = 0.0;
    for (OpId operand : operands) in = std::max(in, static_cast<double>(body.op(operand).shape.element_count()));
    return std::max(in, out);
  }
  if (op.is_parameter() || op.opcode == "constant" || op.opcode == "tuple" || op.opcode == "get-tuple-element" ||
      op.opcode == "bitcast" || op.opcode == "reshape")
    return 0.0;
  return out;
}

}  // namespace

KernelGraphFeatures featurize_kernel(const Kernel& kernel, const FeatureVocabulary& vocabulary) {
  KernelGraphFeatures features;
  const Program& body = kernel.body();
  if (body.empty()) {
    features.node_count = 1;
    features.opcode_ids = {0};
    features.node_features.assign(kNodeFeatureWidth, 0.0f);
    return features;
  }
  const std::size_t n = body.size();
  features.node_count = n;
  features.opcode_ids.resize(n);
  features.node_features.assign(n * kNodeFeatureWidth, 0.0f);
  const OpId root = body.root();
  for (OpId id = 0; id < n; ++id) {
    const Op& op = body.op(id);
    float* row = features.node_features.data() + id * kNodeFeatureWidth;
    features.opcode_ids[id] = vocabulary.opcode_id(op.opcode);
    const Shape& shape = array_shape(op.shape);
    const std::size_t rank = shape.dims.size();
    double dim_sum = 0.0;
    for (std::size_t d = 0; d < rank; ++d) {
      dim_sum += static_cast<double>(shape.dims[d]);
      if (d < kMaxFeatureRank) row[kDims + d] = log_feature(static_cast<double>(shape.dims[d]));
    }
    row[kRank] = static_cast<float>(rank) / static_cast<float>(kMaxFeatureRank);
    row[kDimSum] = log_feature(dim_sum);
    row[kElements] = log_feature(static_cast<double>(op.shape.element_count()));
    const int type = static_cast<int>(shape.element_type);
    if (type >= 0 && type < 19) row[kElementType + type] = 1.0f;
    const auto layout = shape.layout();
    bool default_layout = true;
    for (std::size_t position = 0; position < layout.size(); ++position) {
      const std::int64_t d = layout[position];
      if (d != static_cast<std::int64_t>(rank - 1 - position)) default_layout = false;
      if (d >= 0 && static_cast<std::size_t>(d) < kMaxFeatureRank && rank > 1)
        row[kLayout + d] = static_cast<float>(position) / static_cast<float>(rank - 1);
    }
    row[kDefaultLayout] = default_layout ? 1.0f : 0.0f;
    for (std::int64_t d : op.dimensions)
      if (d >= 0 && static_cast<std::size_t>(d) < kMaxFeatureRank) row[kReduceDims + d] = 1.0f;
    row[kReduceDimCount] = log_feature(static_cast<double>(op.dimensions.size()));
    if (op.window) {
      const Window& w = *op.window;
      double padding = 0.0;
      bool dilated = false;
      for (std::size_t s = 0; s < w.size.size(); ++s) {
        if (s < 3) row[kWindowSize + s] = log_feature(static_cast<double>(w.size[s]));
        if (s < 3 && s < w.stride.size()) row[kWindowStride + s] = log_feature(static_cast<double>(w.stride[s]));
      }
      for (std::int64_t p : w.pad_low) padding += static_cast<double>(std::max<std::int64_t>(p, 0));
      for (std::int64_t p : w.pad_high) padding += static_cast<double>(std::max<std::int64_t>(p, 0));
      for (std::int64_t v : w.window_dilation) dilated |= v > 1;
      for (std::int64_t v : w.base_dilation) dilated |= v > 1;
      row[kWindowPadding] = log_feature(padding);
      row[kWindowDilated] = dilated ? 1.0f : 0.0f;
    }
    const auto operands = body.operands(id);
    if (op.convolution) {
      row[kIsConvolution] = 1.0f;
      if (!operands.empty())
        row[kConvInputFeatures] = log_feature(dim_or_one(body.op(operands[0]).shape, op.convolution->input_feature));
      row[kConvOutputFeatures] = log_feature(dim_or_one(op.shape, op.convolution->output_feature));
      if (operands.size() >= 2) {
        double spatial = 1.0;
        for (std::int64_t d : op.convolution->kernel_spatial) spatial *= dim_or_one(body.op(operands[1]).shape, d);
        row[kConvKernelSpatial] = log_feature(spatial);
      }
    }
    if (op.dot) {
      row[kIsDot] = 1.0f;
      double contraction = 1.0, batch = 1.0;
      if (!operands.empty()) {
        for (std::int64_t d : op.dot->lhs_contracting) contraction *= dim_or_one(body.op(operands[0]).shape, d);
        for (std::int64_t d : op.dot->lhs_batch) batch *= dim_or_one(body.op(operands[0]).shape, d);
      }
      row[kDotContraction] = log_feature(contraction);
      row[kDotBatch] = log_feature(batch);
      row[kDotContractingDims] = static_cast<float>(op.dot->lhs_contracting.size()) / static_cast<float>(kMaxFeatureRank);
    }
    const double flops = op_flops(body, id);
    double bytes = static_cast<double>(op.shape.byte_size());
    for (OpId operand : operands) bytes += static_cast<double>(body.op(operand).shape.byte_size());
    row[kFlops] = log_feature(flops);
    row[kBytes] = log_feature(bytes);
    row[kIntensity] = static_cast<float>(std::log2((1.0 + flops) / (1.0 + bytes))) * kLogScale;
    row[kIsParameter] = op.is_parameter() ? 1.0f : 0.0f;
    row[kIsRoot] = id == root ? 1.0f : 0.0f;
    const auto users = body.users(id);
    row[kFanIn] = log_feature(static_cast<double>(operands.size()));
    row[kFanOut] = log_feature(static_cast<double>(users.size()));
    std::size_t called = 0;
    for (const auto& computation : op.called) called += computation ? computation->size() : 0;
    row[kCalledSize] = log_feature(static_cast<double>(called));
  }
  for (const Edge& edge : body.edges()) {
    features.edge_producer.push_back(static_cast<std::int64_t>(edge.producer));
    features.edge_consumer.push_back(static_cast<std::int64_t>(edge.consumer));
  }
  const Shape& out = array_shape(body.op(root).shape);
  features.output_dims = out.dims;
  features.output_element_bytes = std::max(1, element_type_bytes(out.element_type));
  return features;
}

}  // namespace perftune
