#include "offline/program_generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iterator>
#include <numeric>
#include <stdexcept>

#include "hardware/reference/op_semantics.h"
#include "ir/count_limits.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/program_json.h"
#include "ir/random.h"

namespace perftune {

namespace {

using nlohmann::json;
using Shape = std::vector<std::int64_t>;

std::int64_t elements(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

// One of `choices` (a range of items), with probability proportional to weight(item).
template <typename Range, typename Weight>
auto pick_weighted(Rng& rng, const Range& choices, Weight weight) -> decltype(*std::begin(choices)) {
  double total = 0;
  for (const auto& c : choices) total += weight(c);
  double x = uniform_unit(rng) * total;
  for (const auto& c : choices) {
    if (x < weight(c)) return c;
    x -= weight(c);
  }
  return *std::prev(std::end(choices));
}

std::int64_t draw(Rng& rng, const std::vector<Weighted>& choices) {
  return pick_weighted(rng, choices, [](const Weighted& c) { return c.weight; }).value;
}

// The program under construction, as the program format's JSON (so that it is validated exactly
// as a hand-written file is), with the size checks of the spec.
class Builder {
 public:
  Builder(const GeneratorSpec& spec, Rng& rng) : spec_(spec), rng_(rng) {}

  Rng& rng() { return rng_; }
  const GeneratorSpec& spec() const { return spec_; }
  double flops() const { return flops_; }

  std::string param(const Shape& shape) {
    return add({{"opcode", "parameter"}, {"shape", shape}, {"parameter_number", parameters_++}}, "p");
  }
  std::string op(const std::string& opcode, const std::vector<std::string>& operands, const Shape& shape, json attributes = json::object()) {
    attributes["opcode"] = opcode;
    attributes["operands"] = operands;
    attributes["shape"] = shape;
    return add(attributes, "v");
  }
  // A scalar parameter (input_data.h draws scalars in [0.5, 1): scales, epsilons, thresholds)
  // broadcast to `shape`.
  std::string scalar(const Shape& shape) { return op("broadcast", {param({})}, shape, {{"dimensions", json::array()}}); }
  // A vector parameter along dimension `dim` of `shape` (a bias, a per-channel scale).
  std::string along(const Shape& shape, std::size_t dim) {
    return op("broadcast", {param({shape[dim]})}, shape, {{"dimensions", {dim}}});
  }
  // A constant with its values (copied into every kernel that reads it).
  std::string constant(const Shape& shape, const std::vector<double>& values) {
    return add({{"opcode", "constant"}, {"shape", shape}, {"value", values}}, "c");
  }
  std::string broadcast(const std::string& value, const Shape& shape, const std::vector<std::size_t>& kept) {
    return op("broadcast", {value}, shape, {{"dimensions", kept}});
  }
  std::string reduce(const std::string& value, const Shape& shape, const std::vector<std::size_t>& dims, bool maximum) {
    Shape out;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) out.push_back(shape[d]);
    json attributes = {{"dimensions", dims}};
    if (maximum) attributes["called"] = {max_body()};
    return op("reduce", {value}, out, attributes);
  }
  std::string max_body() {
    uses_max_ = true;
    return "max_body";
  }
  void count_flops(double f) { flops_ += f; }
  // Whether a tensor of `shape` and `more` flops still fit the spec's limits.
  bool fits(const Shape& shape, double more = 0) const {
    return elements(shape) <= spec_.max_elements && flops_ + more <= spec_.max_flops;
  }

  json program(const std::string& name, const std::string& root) const {
    json program = {{"format", "perftune-program"}, {"version", 1}, {"name", name}, {"root", root}, {"ops", ops_}};
    if (uses_max_)
      program["computations"] = {{{"name", "max_body"}, {"root", "m"}, {"ops", {
          {{"name", "a"}, {"opcode", "parameter"}, {"shape", json::array()}, {"parameter_number", 0}},
          {{"name", "b"}, {"opcode", "parameter"}, {"shape", json::array()}, {"parameter_number", 1}},
          {{"name", "m"}, {"opcode", "maximum"}, {"operands", {"a", "b"}}, {"shape", json::array()}}}}}};
    return program;
  }

 private:
  std::string add(json op, const char* prefix) {
    const std::string name = prefix + std::to_string(ops_.size());
    op["name"] = name;
    ops_.push_back(std::move(op));
    return name;
  }

  const GeneratorSpec& spec_;
  Rng& rng_;
  json ops_ = json::array();
  int parameters_ = 0;
  bool uses_max_ = false;
  double flops_ = 0;
};

// The running value: a matrix [rows, features], an image or a volume, channels last (NHWC,
// NDHWC: XLA's layout) or first (NCHW: PyTorch's, which puts a spatial extent innermost, where
// the schedules' vector lanes go); image blocks act on the spatial dimensions, however many.
struct Value {
  std::string name;
  Shape shape;
  bool channels_first = false;
  bool image() const { return shape.size() >= 4; }
  std::size_t spatial_dims() const { return shape.size() - 2; }
  std::size_t channel_dim() const { return channels_first ? 1 : shape.size() - 1; }
  // The spatial dimensions, in order: after the batch, and after the channels when they come first.
  std::vector<std::size_t> spatial() const {
    std::vector<std::size_t> dims(spatial_dims());
    std::iota(dims.begin(), dims.end(), channels_first ? 2 : 1);
    return dims;
  }
  // The same layout over another shape.
  Value with(std::string other_name, Shape other_shape) const { return {std::move(other_name), std::move(other_shape), channels_first}; }
};

// `inner` on each spatial dimension, `outer` on batch and channels.
std::vector<std::int64_t> per_spatial(const Value& x, std::int64_t inner, std::int64_t outer) {
  std::vector<std::int64_t> v(x.shape.size(), outer);
  for (const std::size_t d : x.spatial()) v[d] = inner;
  return v;
}

// from, from + 1, ..., n of them: the dimension lists of windows and reductions.
template <typename T>
std::vector<T> counting(T from, std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from + static_cast<T>(i);
  return v;
}

std::string activation(Builder& b, const std::string& x, const Shape& shape) {
  switch (uniform_index(b.rng(), 4)) {
    case 0: return b.op("maximum", {x, b.scalar(shape)}, shape);  // a ReLU with a threshold
    case 1: return b.op("tanh", {x}, shape);
    case 2: return b.op("logistic", {x}, shape);
    default: return b.op("multiply", {x, b.op("logistic", {x}, shape)}, shape);  // swish
  }
}

// A bias adds a vector along `bias_dim` (the features of a matrix, the channels of an image).
std::string elementwise_chain(Builder& b, std::string x, const Shape& shape, std::size_t bias_dim) {
  static const char* unary[] = {"tanh", "logistic", "abs", "negate", "exponential"};
  static const char* with_scalar[] = {"multiply", "add", "subtract", "maximum", "minimum"};
  const std::uint64_t length = 1 + uniform_index(b.rng(), 3);
  for (std::uint64_t i = 0; i < length; ++i) {
    switch (uniform_index(b.rng(), 3)) {
      case 0: x = b.op(unary[uniform_index(b.rng(), 5)], {x}, shape); break;
      case 1: x = b.op(with_scalar[uniform_index(b.rng(), 5)], {x, b.scalar(shape)}, shape); break;
      default: x = b.op("add", {x, b.along(shape, bias_dim)}, shape); break;
    }
  }
  return x;
}

// dot(x [M, K], w [K, N]) + bias, then an activation (or not).
std::optional<Value> dense(Builder& b, const Value& x, std::int64_t n, bool activate) {
  const Shape out = {x.shape[0], n};
  const double flops = 2.0 * static_cast<double>(x.shape[0] * x.shape[1] * n);
  if (!b.fits(out, flops) || !b.fits({x.shape[1], n})) return std::nullopt;
  b.count_flops(flops);
  std::string y = b.op("dot", {x.name, b.param({x.shape[1], n})}, out, {{"dot", {{"lhs_contracting", {1}}, {"rhs_contracting", {0}}}}});
  y = b.op("add", {y, b.along(out, 1)}, out);
  if (activate) y = activation(b, y, out);
  return Value{y, out};
}

// Normalizes over `dims` (the reduced dimensions) with a mean and a variance, then scales and
// shifts per element of `channel`: a layer norm (matrix, over features) or batch-norm statistics
// (image, over batch and space).
Value normalize(Builder& b, const Value& x, const std::vector<std::size_t>& dims, std::size_t channel) {
  std::vector<std::size_t> kept;
  for (std::size_t d = 0; d < x.shape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(d);
  const std::string sum = b.reduce(x.name, x.shape, dims, false);
  Shape reduced;
  for (std::size_t d : kept) reduced.push_back(x.shape[d]);
  const std::string mean = b.op("multiply", {sum, b.scalar(reduced)}, reduced);
  const std::string centered = b.op("subtract", {x.name, b.broadcast(mean, x.shape, kept)}, x.shape);
  const std::string square = b.op("multiply", {centered, centered}, x.shape);
  const std::string variance = b.op("multiply", {b.reduce(square, x.shape, dims, false), b.scalar(reduced)}, reduced);
  const std::string inv_std = b.op("rsqrt", {b.op("add", {variance, b.scalar(reduced)}, reduced)}, reduced);
  std::string y = b.op("multiply", {centered, b.broadcast(inv_std, x.shape, kept)}, x.shape);
  y = b.op("multiply", {y, b.along(x.shape, channel)}, x.shape);
  return x.with(b.op("add", {y, b.along(x.shape, channel)}, x.shape), x.shape);
}

Value softmax(Builder& b, const Value& x) {
  const std::string max = b.reduce(x.name, x.shape, {1}, true);
  const std::string shifted = b.op("subtract", {x.name, b.broadcast(max, x.shape, {0})}, x.shape);
  const std::string e = b.op("exponential", {shifted}, x.shape);
  const std::string sum = b.reduce(e, x.shape, {1}, false);
  return {b.op("divide", {e, b.broadcast(sum, x.shape, {0})}, x.shape), x.shape};
}

// Single-head self-attention over the rows, with its residual.
std::optional<Value> attention(Builder& b, const Value& x) {
  const std::int64_t s = x.shape[0], f = x.shape[1];
  const double flops = 2.0 * static_cast<double>(3 * s * f * f + 2 * s * s * f);
  if (!b.fits({s, s}, flops) || !b.fits({f, f})) return std::nullopt;
  b.count_flops(flops);
  const json plain = {{"dot", {{"lhs_contracting", {1}}, {"rhs_contracting", {0}}}}};
  const std::string q = b.op("dot", {x.name, b.param({f, f})}, x.shape, plain);
  const std::string k = b.op("dot", {x.name, b.param({f, f})}, x.shape, plain);
  const std::string v = b.op("dot", {x.name, b.param({f, f})}, x.shape, plain);
  const Shape scores_shape = {s, s};
  std::string scores = b.op("dot", {q, k}, scores_shape, {{"dot", {{"lhs_contracting", {1}}, {"rhs_contracting", {1}}}}});
  scores = b.op("multiply", {scores, b.scalar(scores_shape)}, scores_shape);
  const Value probs = softmax(b, {scores, scores_shape});
  const std::string attended = b.op("dot", {probs.name, v}, x.shape, plain);
  return Value{b.op("add", {x.name, attended}, x.shape), x.shape};
}

// How a convolution block's window and channels are shaped beyond its size and stride.
struct ConvShape {
  std::int64_t groups = 1;    // feature groups: input and output channels split alike (= channels: depthwise)
  std::int64_t dilation = 1;  // window dilation on every spatial dimension
  bool same_padding = true;   // padded so that stride 1 keeps the extent; false: no padding (valid)
};

// A k x k (x k) convolution (stride 1 or 2) to `c_out` channels, bias and activation.
std::optional<Value> conv(Builder& b, const Value& x, std::int64_t k, std::int64_t stride, std::int64_t c_out,
                          const ConvShape& shape = {}) {
  const std::int64_t reach = (k - 1) * shape.dilation + 1;  // the dilated window's extent
  const std::int64_t pad = shape.same_padding ? (reach - 1) / 2 : 0;
  const std::size_t n = x.spatial_dims(), channel = x.channel_dim();
  const std::int64_t c_in = x.shape[channel];
  if (c_in % shape.groups != 0 || c_out % shape.groups != 0) return std::nullopt;
  Shape out = x.shape;
  out[channel] = c_out;
  const std::vector<std::size_t> spatial = x.spatial();
  for (const std::size_t d : spatial) out[d] = (x.shape[d] + 2 * pad - reach) / stride + 1;
  double window_elements = 1;
  for (std::size_t d = 0; d < n; ++d) window_elements *= static_cast<double>(k);
  const double flops = 2.0 * static_cast<double>(elements(out)) * window_elements * static_cast<double>(c_in / shape.groups);
  Shape weights(n, k);  // spatial window, input channels per group, output channels in either layout
  weights.push_back(c_in / shape.groups);
  weights.push_back(c_out);
  if (*std::min_element(out.begin(), out.end()) < 1 || !b.fits(out, flops) || !b.fits(weights)) return std::nullopt;
  b.count_flops(flops);
  const auto feature = static_cast<std::int64_t>(channel);
  json window = {{"size", Shape(n, k)}, {"stride", Shape(n, stride)}, {"pad_low", Shape(n, pad)}, {"pad_high", Shape(n, pad)}};
  if (shape.dilation > 1) window["window_dilation"] = Shape(n, shape.dilation);
  json dims = {{"input_batch", 0}, {"input_feature", feature}, {"input_spatial", spatial},
               {"kernel_input_feature", static_cast<std::int64_t>(n)}, {"kernel_output_feature", static_cast<std::int64_t>(n) + 1},
               {"kernel_spatial", counting<std::int64_t>(0, n)},
               {"output_batch", 0}, {"output_feature", feature}, {"output_spatial", spatial}};
  if (shape.groups > 1) dims["feature_group_count"] = shape.groups;
  std::string y = b.op("convolution", {x.name, b.param(weights)}, out, {{"window", window}, {"convolution", dims}});
  y = b.op("add", {y, b.along(out, channel)}, out);
  return x.with(activation(b, y, out), out);
}

// A 2 x 2 (x 2) max pool (stride 2) or a 3 x 3 (x 3) average pool (stride 1, padded).
std::optional<Value> pool(Builder& b, const Value& x) {
  if (uniform_index(b.rng(), 2) == 0) {
    Shape out = x.shape;
    for (const std::size_t d : x.spatial()) {
      if (x.shape[d] < 2) return std::nullopt;
      out[d] = x.shape[d] / 2;
    }
    const json window = {{"size", per_spatial(x, 2, 1)}, {"stride", per_spatial(x, 2, 1)}};
    return x.with(b.op("reduce-window", {x.name}, out, {{"window", window}, {"called", {b.max_body()}}}), out);
  }
  const json window = {{"size", per_spatial(x, 3, 1)}, {"stride", per_spatial(x, 1, 1)}, {"pad_low", per_spatial(x, 1, 0)}, {"pad_high", per_spatial(x, 1, 0)}};
  const std::string sum = b.op("reduce-window", {x.name}, x.shape, {{"window", window}});
  return x.with(b.op("multiply", {sum, b.scalar(x.shape)}, x.shape), x.shape);
}

// Channels [first, first + count) of an image.
Value channel_slice(Builder& b, const Value& x, std::int64_t first, std::int64_t count) {
  Shape out = x.shape, start(x.shape.size(), 0), stride(x.shape.size(), 1);
  out[x.channel_dim()] = count;
  start[x.channel_dim()] = first;
  return x.with(b.op("slice", {x.name}, out, {{"slice", {{"start", start}, {"stride", stride}}}}), out);
}

// Two images of one layout joined along the channels.
std::optional<Value> join_channels(Builder& b, const Value& first, const Value& second) {
  Shape out = first.shape;
  out[first.channel_dim()] += second.shape[second.channel_dim()];
  if (!b.fits(out)) return std::nullopt;
  return first.with(b.op("concatenate", {first.name, second.name}, out, {{"dimensions", {first.channel_dim()}}}), out);
}

// A block of real networks' graphs that the chain grammar above lacks (drawn with network_share),
// or nullopt when it does not apply or would break a limit.
std::optional<Value> network_block(Builder& b, const std::string& kind, const Value& x) {
  Rng& rng = b.rng();
  if (!x.image()) {
    if (kind != "embedding") return std::nullopt;
    // Rows of a weight table looked up at constant indices (token or position embeddings), added in.
    const std::int64_t rows = x.shape[0], features = x.shape[1];
    const std::int64_t vocabulary = rows * static_cast<std::int64_t>(1 + uniform_index(rng, 4));
    if (!b.fits({vocabulary, features})) return std::nullopt;
    std::vector<std::int64_t> indices(static_cast<std::size_t>(rows));
    for (std::int64_t& i : indices) i = static_cast<std::int64_t>(uniform_index(rng, static_cast<std::uint64_t>(vocabulary)));
    const std::string rows_of = b.op("gather", {b.param({vocabulary, features})}, x.shape, {{"dimensions", {0}}, {"indices", indices}});
    return Value{b.op("add", {x.name, rows_of}, x.shape), x.shape};
  }
  const std::int64_t channels = x.shape[x.channel_dim()];
  if (kind == "grouped_conv") {
    // Depthwise (MobileNet, EfficientNet) half the time, else 2-8 groups (ResNeXt, RegNet); at
    // stride 1 a quarter of the windows are dilated by 2 (DeepLab's atrous convolutions).
    static const std::int64_t group_counts[] = {2, 4, 8};
    const bool depthwise = uniform_index(rng, 2) == 0;
    const std::int64_t groups = depthwise ? channels : group_counts[uniform_index(rng, 3)];
    const std::int64_t stride = uniform_index(rng, 4) == 0 ? 2 : 1;
    const std::int64_t dilation = stride == 1 && uniform_index(rng, 4) == 0 ? 2 : 1;
    const std::int64_t k = depthwise && uniform_index(rng, 3) == 0 ? 5 : 3;
    return conv(b, x, k, stride, channels, {groups, dilation});
  }
  if (kind == "concat") {
    // DenseNet's growth: the input and a convolution of it, joined along the channels.
    static const std::int64_t kernels[] = {1, 3};
    const auto grown = conv(b, x, kernels[uniform_index(rng, 2)], 1, draw(rng, b.spec().channels));
    if (!grown) return std::nullopt;
    return join_channels(b, x, *grown);
  }
  if (kind == "channel_split") {
    // ShuffleNet's unit: half the channels pass through, the other half through a 1x1 convolution.
    if (channels % 2 != 0) return std::nullopt;
    const Value kept = channel_slice(b, x, 0, channels / 2);
    const auto mixed = conv(b, channel_slice(b, x, channels / 2, channels / 2), 1, 1, channels / 2);
    if (!mixed) return std::nullopt;
    return join_channels(b, kept, *mixed);
  }
  if (kind == "pad") {
    // An explicit zero pad (ONNX's Pad, TensorFlow's "SAME" written out), then a 3x3 (x 3)
    // convolution without padding of its own.
    Shape padded = x.shape;
    for (const std::size_t d : x.spatial()) padded[d] += 2;
    if (!b.fits(padded)) return std::nullopt;
    const json padding = {{"low", per_spatial(x, 1, 0)}, {"high", per_spatial(x, 1, 0)}};
    const Value p = x.with(b.op("pad", {x.name, b.constant({}, {0.0})}, padded, {{"padding", padding}}), padded);
    return conv(b, p, 3, 1, draw(rng, b.spec().channels), {1, 1, false});
  }
  return std::nullopt;
}

// One block applied to `x`, or nullopt when it does not apply or would break a limit.
std::optional<Value> block(Builder& b, const std::string& kind, const Value& x) {
  Rng& rng = b.rng();
  const GeneratorSpec& spec = b.spec();
  if (x.image()) {
    if (kind == "conv") {
      static const std::int64_t kernels[] = {1, 3, 3, 5};
      return conv(b, x, kernels[uniform_index(rng, 4)], uniform_index(rng, 4) == 0 ? 2 : 1, draw(rng, spec.channels));
    }
    if (kind == "residual") {
      auto inner = conv(b, x, 3, 1, x.shape[x.channel_dim()]);
      if (!inner) return std::nullopt;
      return x.with(b.op("add", {x.name, inner->name}, x.shape), x.shape);
    }
    if (kind == "pool") return pool(b, x);
    const std::vector<std::size_t> spatial = x.spatial();
    if (kind == "batch_norm") {
      std::vector<std::size_t> batch_and_space{0};
      batch_and_space.insert(batch_and_space.end(), spatial.begin(), spatial.end());
      return normalize(b, x, batch_and_space, x.channel_dim());
    }
    if (kind == "elementwise") return x.with(elementwise_chain(b, x.name, x.shape, x.channel_dim()), x.shape);
    if (kind == "global_pool") {
      const Shape out = {x.shape[0], x.shape[x.channel_dim()]};
      const std::string sum = b.reduce(x.name, x.shape, spatial, false);
      return Value{b.op("multiply", {sum, b.scalar(out)}, out), out};  // a matrix: no layout
    }
    return std::nullopt;
  }
  if (kind == "dense") return dense(b, x, draw(rng, spec.features), true);
  if (kind == "residual") {
    auto inner = dense(b, x, x.shape[1], true);
    if (!inner) return std::nullopt;
    return Value{b.op("add", {x.name, inner->name}, x.shape), x.shape};
  }
  if (kind == "layer_norm") return normalize(b, x, {1}, 1);
  if (kind == "softmax") return softmax(b, x);
  if (kind == "attention") return attention(b, x);
  if (kind == "transpose") {
    const Shape out = {x.shape[1], x.shape[0]};
    return Value{b.op("transpose", {x.name}, out, {{"dimensions", {1, 0}}}), out};
  }
  if (kind == "elementwise") return Value{elementwise_chain(b, x.name, x.shape, 1), x.shape};
  return std::nullopt;
}

std::string draw_block(Rng& rng, const std::map<std::string, double>& weights) {
  return pick_weighted(rng, weights, [](const auto& entry) { return entry.second; }).first;
}

std::vector<Weighted> weighted(std::initializer_list<std::pair<std::int64_t, double>> values) {
  std::vector<Weighted> out;
  for (const auto& [v, w] : values) out.push_back({v, w});
  return out;
}

// A draw needs a positive, finite total: all weights 0 leave nothing to draw, and two of 1e308 sum
// to infinity; either way pick_weighted would fall through to the last choice every time.
template <typename Range, typename Weight>
void check_weight_total(const JsonView& view, const Range& choices, Weight weight) {
  double total = 0;
  for (const auto& c : choices) total += weight(c);
  if (!(total > 0) || !std::isfinite(total))
    view.fail("weights with a positive, finite sum (they sum to " + std::to_string(total) + ")");
}

// Weights of the kinds already in `weights` (the grammar's); the ones left out keep theirs.
void parse_block_weights(const JsonView& view, std::map<std::string, double>& weights) {
  std::string kinds;
  for (const auto& [kind, unused] : weights) kinds += (kinds.empty() ? "" : ", ") + kind;
  for (const auto& [kind, weight] : view.value().items()) {
    if (!weights.count(kind)) view.at(kind).fail("one of the block kinds " + kinds);
    weights[kind] = view.at(kind).as_non_negative_number();
  }
  check_weight_total(view, weights, [](const auto& entry) { return entry.second; });
}

std::vector<Weighted> parse_weighted(const JsonView& view) {
  std::vector<Weighted> out;
  for (const JsonView& entry : view.elements()) {
    entry.expect_keys({"value", "weight"});
    out.push_back({entry.at("value").as_positive_int(), entry.at("weight").as_non_negative_number()});
  }
  if (out.empty()) view.fail("a non-empty list of {\"value\", \"weight\"}");
  check_weight_total(view, out, [](const Weighted& w) { return w.weight; });
  return out;
}

}  // namespace

GeneratorSpec default_generator_spec() {
  GeneratorSpec spec;
  spec.block_weights = {{"dense", 3},   {"residual", 1.5}, {"layer_norm", 1}, {"softmax", 0.7},   {"attention", 0.7},
                        {"transpose", 0.3}, {"conv", 3},   {"pool", 1},       {"batch_norm", 1}, {"global_pool", 0.7},
                        {"elementwise", 1.5}};
  spec.network_block_weights = {{"grouped_conv", 2}, {"concat", 1}, {"channel_split", 1}, {"pad", 0.5}, {"embedding", 0.5}};
  // Fallbacks for a spec that leaves them out, set by hand to cover the bundled programs' and the
  // XLA training step's sizes; configs/generate/default.json carries the ones measured on them
  // (program_statistics.h).
  spec.rows = weighted({{8, 1}, {16, 1}, {32, 2}, {64, 2}, {128, 1.5}, {256, 1}, {512, 0.5}});
  spec.features = weighted({{32, 1}, {64, 2}, {96, 0.5}, {128, 2}, {192, 0.5}, {256, 2}, {384, 0.5}, {512, 1.5}, {768, 0.5}, {1024, 0.5}});
  spec.image_batch = weighted({{1, 1}, {2, 2}, {4, 1}, {8, 0.5}});
  spec.spatial = weighted({{7, 0.5}, {12, 1}, {14, 1}, {16, 1}, {24, 1}, {28, 1}, {32, 1}, {48, 0.5}, {56, 0.5}, {96, 0.3}});
  spec.channels = weighted({{4, 0.5}, {8, 1}, {16, 1.5}, {32, 2}, {48, 0.5}, {64, 2}, {96, 0.5}, {128, 1}, {256, 0.5}});
  return spec;
}

namespace {

// `extends_chain` holds the files being loaded below this one, so that a cycle is an error, not a
// stack overflow.
GeneratorSpec load_spec(const std::string& path, std::vector<std::string>& extends_chain) {
  const json parsed = parse_json_file(path);
  const JsonView view(parsed, path);
  view.expect_keys({"extends", "name", "description", "output", "seed", "count", "blocks", "max_elements", "max_flops",
                    "block_weights", "network_share", "network_block_weights", "image_share", "volume_share", "channels_first_share", "rows", "features",
                    "image_batch", "spatial", "channels"});
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  GeneratorSpec spec = default_generator_spec();
  if (auto v = view.find("extends")) {
    const std::string base = (folder / v->as_string()).lexically_normal().string();
    if (std::find(extends_chain.begin(), extends_chain.end(), base) != extends_chain.end())
      v->fail("a spec that does not extend itself, directly or through another");
    extends_chain.push_back(base);
    spec = load_spec(base, extends_chain);
  }
  spec.file = path;
  if (auto v = view.find("name")) spec.name = v->as_string();
  if (auto v = view.find("description")) spec.description = v->as_string();
  // Required even when extending: two specs writing into one folder would mix their corpora.
  spec.output = (folder / view.at("output").as_string()).lexically_normal().string();
  if (auto v = view.find("seed")) spec.seed = v->as_count();
  if (auto v = view.find("count")) spec.count = bounded_count(*v, 0, kMaxGeneratedPrograms, "programs");
  if (auto v = view.find("blocks")) {
    v->expect_keys({"min", "max"});
    spec.min_blocks = v->at("min").as_positive_int();
    spec.max_blocks = v->at("max").as_positive_int();
    if (spec.max_blocks < spec.min_blocks) v->at("max").fail("a maximum not below \"min\"");
  }
  if (auto v = view.find("max_elements")) spec.max_elements = v->as_positive_int();
  if (auto v = view.find("max_flops")) {
    spec.max_flops = v->as_number();
    if (!(spec.max_flops > 0)) v->fail("a number of flops above 0");
  }
  if (auto v = view.find("image_share")) {
    spec.image_share = v->as_non_negative_number();
    if (spec.image_share > 1) v->fail("a share between 0 and 1");
  }
  if (auto v = view.find("volume_share")) {
    spec.volume_share = v->as_non_negative_number();
    if (spec.volume_share > 1) v->fail("a share between 0 and 1");
  }
  if (auto v = view.find("channels_first_share")) {
    spec.channels_first_share = v->as_non_negative_number();
    if (spec.channels_first_share > 1) v->fail("a share between 0 and 1");
  }
  if (auto v = view.find("network_share")) {
    spec.network_share = v->as_non_negative_number();
    if (spec.network_share > 1) v->fail("a share between 0 and 1");
  }
  for (auto [key, target] : {std::pair{"block_weights", &spec.block_weights}, std::pair{"network_block_weights", &spec.network_block_weights}})
    if (auto v = view.find(key)) parse_block_weights(*v, *target);
  for (auto [key, target] : {std::pair{"rows", &spec.rows}, std::pair{"features", &spec.features},
                             std::pair{"image_batch", &spec.image_batch}, std::pair{"spatial", &spec.spatial},
                             std::pair{"channels", &spec.channels}})
    if (auto v = view.find(key)) {
      *target = parse_weighted(*v);
      // A dimension above max_elements makes every tensor it is in too large: it would never be drawn.
      for (std::size_t i = 0; i < target->size(); ++i)
        if ((*target)[i].value > spec.max_elements)
          v->at(i).at("value").fail("a size of at most max_elements (" + std::to_string(spec.max_elements) + "), found " +
                                    std::to_string((*target)[i].value) + ", which no tensor of the spec can have");
    }
  return spec;
}

}  // namespace

GeneratorSpec load_generator_spec(const std::string& path) {
  std::vector<std::string> extends_chain{std::filesystem::path(path).lexically_normal().string()};
  return load_spec(path, extends_chain);
}

GeneratedProgram generate_program(const GeneratorSpec& spec, std::uint64_t index) {
  char name[64];
  std::snprintf(name, sizeof name, "%s_%05llu", spec.name.c_str(), static_cast<unsigned long long>(index));
  for (std::uint64_t attempt = 0; attempt < 100; ++attempt) {
    Rng rng(splitmix64(spec.seed * 0x9e3779b97f4a7c15ull ^ splitmix64(index * 1000 + attempt)));
    Builder b(spec, rng);
    GeneratedProgram generated;
    Value x;
    if (uniform_unit(rng) < spec.image_share) {
      // No draw at all when volumes are off, so a 2-D spec's programs stay what they were.
      const bool volume = spec.volume_share > 0 && uniform_unit(rng) < spec.volume_share;
      const std::int64_t side = draw(rng, spec.spatial);
      x.shape = {draw(rng, spec.image_batch), side, side};
      if (volume) x.shape.push_back(side);
      x.shape.push_back(draw(rng, spec.channels));
      // As for volumes: no draw when the share is 0, so a channels-last spec's programs stay the same.
      x.channels_first = spec.channels_first_share > 0 && uniform_unit(rng) < spec.channels_first_share;
      if (x.channels_first) std::rotate(x.shape.begin() + 1, x.shape.end() - 1, x.shape.end());
      generated.blocks.push_back(volume ? "volume" : "image");
    } else {
      x.shape = {draw(rng, spec.rows), draw(rng, spec.features)};
      generated.blocks.push_back("matrix");
    }
    if (!b.fits(x.shape)) continue;
    x.name = b.param(x.shape);
    const std::int64_t blocks = spec.min_blocks + static_cast<std::int64_t>(uniform_index(rng, static_cast<std::uint64_t>(spec.max_blocks - spec.min_blocks + 1)));
    for (std::int64_t placed = 0, tries = 0; placed < blocks && tries < 20 * blocks; ++tries) {
      // No draw at all when network blocks are off, so a spec without them draws what it drew before.
      const bool network = spec.network_share > 0 && uniform_unit(rng) < spec.network_share;
      const std::string kind = draw_block(rng, network ? spec.network_block_weights : spec.block_weights);
      if (auto next = network ? network_block(b, kind, x) : block(b, kind, x)) {
        x = *next;
        generated.blocks.push_back(kind);
        ++placed;
      }
    }
    if (static_cast<std::int64_t>(generated.blocks.size()) - 1 < spec.min_blocks) continue;
    const json text = b.program(name, x.name);
    generated.program = program_from_json(JsonView(text, spec.file.empty() ? std::string(name) : spec.file + ": " + name));
    check_supported(generated.program);  // a draw the Halide backend cannot lower is a bug here
    generated.flops = b.flops();
    return generated;
  }
  // The limits are the spec's, so the spec's file and members are what the user changes.
  throw InputError(spec.file.empty() ? "the default generator spec" : spec.file, "$.max_elements and $.max_flops",
                   "limits some program fits: " + std::string(name) + " found none within max_elements " +
                       std::to_string(spec.max_elements) + " and max_flops " + std::to_string(spec.max_flops) +
                       " after 100 draws; raise them, or draw smaller sizes (rows, features, spatial, channels)");
}

std::string generated_program_path(const GeneratorSpec& spec, std::uint64_t index) {
  char file[96];
  std::snprintf(file, sizeof file, "%s_%05llu.json", spec.name.c_str(), static_cast<unsigned long long>(index));
  return (std::filesystem::path(spec.output) / file).string();
}

}  // namespace perftune
