// ONNX's elementwise ops: numpy broadcasting becomes IR broadcasts, and the activations that the
// IR has no opcode for are composed from ones it has (LeakyRelu = max(x, 0) + alpha * min(x, 0)).
#include <limits>

#include "frontend/node_context.h"

namespace perftune::frontend {

namespace {

Translation unary(const std::string& opcode) {
  return [opcode](NodeContext& c) {
    c.expect_attributes({});
    c.set_output(0, c.builder().elementwise(c.hint(), opcode, {c.value(0)}));
  };
}

Translation binary(const std::string& opcode) {
  return [opcode](NodeContext& c) {
    c.expect_attributes({});
    c.set_output(0, c.builder().binary(c.hint(), opcode, c.value(0), c.value(1)));
  };
}

// Sum, Max, Min, Mean: any number of inputs, broadcast together, combined left to right.
Translation variadic(const std::string& opcode, bool mean) {
  return [opcode, mean](NodeContext& c) {
    c.expect_attributes({});
    if (c.input_count() == 0) c.fail("at least one input");
    OpId acc = c.value(0);
    for (std::size_t i = 1; i < c.input_count(); ++i) acc = c.builder().binary(c.hint(), opcode, acc, c.value(i));
    if (c.input_count() == 1) acc = c.builder().elementwise(c.hint(), "copy", {acc});
    if (mean) acc = c.builder().with_scalar(c.hint(), "divide", acc, static_cast<float>(c.input_count()));
    c.set_output(0, acc);
  };
}

// max(x, 0) + alpha * min(x, 0): x where positive, alpha * x elsewhere, exactly.
OpId leaky(NodeContext& c, OpId x, float alpha) {
  ProgramBuilder& b = c.builder();
  const OpId positive = b.with_scalar(c.hint(".pos"), "maximum", x, 0.0f);
  const OpId negative = b.with_scalar(c.hint(".neg"), "minimum", x, 0.0f);
  return b.elementwise(c.hint(), "add", {positive, b.with_scalar(c.hint(".scaled"), "multiply", negative, alpha)});
}

// clamp(lo, x, hi), each bound a scalar broadcast to x.
OpId clamp(NodeContext& c, OpId x, OpId lo, OpId hi) {
  ProgramBuilder& b = c.builder();
  const Dims dims = b.dims(x);
  return b.elementwise(c.hint(), "clamp", {b.broadcast_to(c.hint(".lo"), lo, dims), x, b.broadcast_to(c.hint(".hi"), hi, dims)});
}

// alpha * x + beta, clamped to [0, 1] (HardSigmoid's definition, in its order of operations).
OpId hard_sigmoid(NodeContext& c, OpId x, float alpha, float beta) {
  ProgramBuilder& b = c.builder();
  const OpId scaled = b.with_scalar(c.hint(".ax"), "multiply", x, alpha);
  return clamp(c, b.with_scalar(c.hint(".axb"), "add", scaled, beta), b.scalar(c.hint(".zero"), 0.0f), b.scalar(c.hint(".one"), 1.0f));
}

void clip(NodeContext& c) {
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0);
  const float inf = std::numeric_limits<float>::infinity();
  OpId lo, hi;
  if (c.opset() < 11) {
    c.expect_attributes({"min", "max"});
    lo = b.scalar(c.hint(".min"), c.attribute_float("min", -inf));
    hi = b.scalar(c.hint(".max"), c.attribute_float("max", inf));
  } else {
    c.expect_attributes({});
    lo = c.present(1) ? c.value(1) : b.scalar(c.hint(".min"), -inf);
    hi = c.present(2) ? c.value(2) : b.scalar(c.hint(".max"), inf);
    if (element_count(b.dims(lo)) != 1 || element_count(b.dims(hi)) != 1) c.fail("scalar min and max");
    lo = b.reshape(c.hint(".min"), lo, {});
    hi = b.reshape(c.hint(".max"), hi, {});
  }
  c.set_output(0, clamp(c, x, lo, hi));
}

}  // namespace

void add_elementwise_ops(TranslationTable& t) {
  t["Add"] = binary("add");
  t["Sub"] = binary("subtract");
  t["Mul"] = binary("multiply");
  t["Div"] = binary("divide");
  t["Pow"] = binary("power");
  t["Sum"] = variadic("add", false);
  t["Mean"] = variadic("add", true);
  t["Max"] = variadic("maximum", false);
  t["Min"] = variadic("minimum", false);
  t["Sqrt"] = unary("sqrt");
  t["Exp"] = unary("exponential");
  t["Log"] = unary("log");
  t["Erf"] = unary("erf");
  t["Tanh"] = unary("tanh");
  t["Sigmoid"] = unary("logistic");
  t["Relu"] = unary("relu");
  t["Abs"] = unary("abs");
  t["Neg"] = unary("negate");
  t["Floor"] = unary("floor");
  t["Ceil"] = unary("ceil");
  t["Sin"] = unary("sine");
  t["Cos"] = unary("cosine");
  t["Reciprocal"] = [](NodeContext& c) {
    c.expect_attributes({});
    c.set_output(0, c.builder().with_scalar(c.hint(), "divide", c.value(0), 1.0f, true));
  };
  t["LeakyRelu"] = [](NodeContext& c) {
    c.expect_attributes({"alpha"});
    c.set_output(0, leaky(c, c.value(0), c.attribute_float("alpha", 0.01f)));
  };
  t["Clip"] = clip;
  t["HardSigmoid"] = [](NodeContext& c) {
    c.expect_attributes({"alpha", "beta"});
    c.set_output(0, hard_sigmoid(c, c.value(0), c.attribute_float("alpha", 0.2f), c.attribute_float("beta", 0.5f)));
  };
  t["HardSwish"] = [](NodeContext& c) {
    c.expect_attributes({});
    const OpId x = c.value(0);
    c.set_output(0, c.builder().elementwise(c.hint(), "multiply", {x, hard_sigmoid(c, x, 1.0f / 6.0f, 0.5f)}));
  };
}

}  // namespace perftune::frontend
