// BatchNormalization (inference), LayerNormalization, Softmax and LogSoftmax as reductions and
// broadcast elementwise ops. A batch norm whose statistics are known at import (a trained
// network's) folds into one scale and one shift per channel, as inference compilers do.
#include <cmath>
#include <numeric>

#include "frontend/node_context.h"
#include "frontend/reductions.h"

namespace perftune::frontend {

namespace {

void batch_norm(NodeContext& c) {
  c.expect_attributes({"epsilon", "momentum", "training_mode", "spatial", "is_test", "consumed_inputs"});
  if (c.attribute_int("training_mode", 0) != 0) c.fail("training_mode 0 (training mode is not supported: inference only)");
  if (c.attribute_int("spatial", 1) != 1) c.fail("spatial 1");
  c.only_first_output();
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0);
  const Dims dims = b.dims(x);
  if (dims.size() < 2) c.fail("an input of rank 2 or more (N, C, ...)");
  const std::int64_t channels = dims[1];
  for (std::size_t i = 1; i <= 4; ++i)
    if (c.dims(i) != Dims{channels}) c.fail("scale, bias, mean and variance of shape [" + std::to_string(channels) + "]");
  const double epsilon = c.attribute_float("epsilon", 1e-5f);
  Dims per_channel(dims.size() - 1, 1);
  per_channel[0] = channels;
  const auto channel = [&](OpId v, const std::string& suffix) { return b.reshape(c.hint(suffix), v, per_channel); };
  const auto input_channel = [&](std::size_t i) { return c.value_as(i, per_channel); };
  if (c.known(1) && c.known(2) && c.known(3) && c.known(4)) {
    auto scale = std::make_shared<Literal>(), shift = std::make_shared<Literal>();
    for (std::int64_t k = 0; k < channels; ++k) {
      const auto i = static_cast<std::size_t>(k);
      const double s = c.constant(1).values[i] / std::sqrt(c.constant(4).values[i] + epsilon);
      scale->push_back(static_cast<float>(s));
      shift->push_back(static_cast<float>(c.constant(2).values[i] - c.constant(3).values[i] * s));
    }
    const OpId scaled = b.binary(c.hint(".scaled"), "multiply", x, b.parameter(c.hint(".scale"), per_channel, true, scale));
    c.set_output(0, b.binary(c.hint(), "add", scaled, b.parameter(c.hint(".shift"), per_channel, true, shift)));
    return;
  }
  // ONNX's formula in its order: (x - mean) / sqrt(var + epsilon) * scale + bias.
  const OpId std_dev = b.elementwise(c.hint(".std"), "sqrt", {b.with_scalar(c.hint(".var"), "add", c.value(4), static_cast<float>(epsilon))});
  OpId y = b.binary(c.hint(".centered"), "subtract", x, input_channel(3));
  y = b.binary(c.hint(".normalized"), "divide", y, channel(std_dev, ".std"));
  y = b.binary(c.hint(".scaled"), "multiply", y, input_channel(1));
  c.set_output(0, b.binary(c.hint(), "add", y, input_channel(2)));
}

void layer_norm(NodeContext& c) {
  c.expect_attributes({"axis", "epsilon", "stash_type"});
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0);
  const Dims dims = b.dims(x);
  const auto axis = static_cast<std::size_t>(c.axis(c.attribute_int("axis", -1), dims.size()));
  Dims axes(dims.size() - axis);
  std::iota(axes.begin(), axes.end(), static_cast<std::int64_t>(axis));
  const OpId mean = mean_over(b, c.hint(".mean"), x, axes);
  const OpId centered = b.binary(c.hint(".centered"), "subtract", x, mean);
  const OpId variance = mean_over(b, c.hint(".var"), b.elementwise(c.hint(".sq"), "multiply", {centered, centered}), axes);
  const float epsilon = c.attribute_float("epsilon", 1e-5f);
  const OpId rstd = b.elementwise(c.hint(".rstd"), "rsqrt", {b.with_scalar(c.hint(".var_eps"), "add", variance, epsilon)});
  OpId y = b.binary(c.hint(".normalized"), "multiply", centered, rstd);
  y = b.binary(c.present(2) ? c.hint(".scaled") : c.hint(), "multiply", y, c.value(1));
  if (c.present(2)) y = b.binary(c.hint(), "add", y, c.value(2));
  c.set_output(0, y);
  c.set_output(1, mean);  // Mean and InvStdDev, at the input's rank (1 on the normalized axes)
  c.set_output(2, rstd);
}

// exp(x - max) / sum(exp(x - max)) over `axes` (or its log), numerically stable as ONNX's is.
void softmax(NodeContext& c, bool log) {
  c.expect_attributes({"axis"});
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0);
  const Dims dims = b.dims(x);
  Dims axes;
  if (c.opset() >= 13) {
    axes = {c.axis(c.attribute_int("axis", -1), dims.size())};
  } else {  // the input coerced to 2-D at `axis`: every dimension from it on is normalized
    for (auto a = c.axis(c.attribute_int("axis", 1), dims.size()); a < static_cast<std::int64_t>(dims.size()); ++a) axes.push_back(a);
  }
  const OpId max = keep_dims(b, c.hint(".max"), b.reduce(c.hint(".max"), x, axes, "maximum"), dims, axes);
  const OpId shifted = b.binary(c.hint(".shifted"), "subtract", x, max);
  const OpId exp = b.elementwise(c.hint(".exp"), "exponential", {shifted});
  const OpId sum = keep_dims(b, c.hint(".sum"), b.reduce(c.hint(".sum"), exp, axes, "add"), dims, axes);
  if (log) c.set_output(0, b.binary(c.hint(), "subtract", shifted, b.elementwise(c.hint(".log"), "log", {sum})));
  else c.set_output(0, b.binary(c.hint(), "divide", exp, sum));
}

}  // namespace

void add_normalization_ops(TranslationTable& t) {
  t["BatchNormalization"] = batch_norm;
  t["LayerNormalization"] = layer_norm;
  t["Softmax"] = [](NodeContext& c) { softmax(c, false); };
  t["LogSoftmax"] = [](NodeContext& c) { softmax(c, true); };
}

}  // namespace perftune::frontend
