#include "surrogate/analytical/op_cost.h"

#include <memory>

#include "op_builders.h"
#include "test_support.h"

namespace perftune {
namespace {

using test::f32;
using test::make_op;
using test::parameter;

// [64,256] x [256,512] -> [64,512]
Kernel dot_kernel() {
  Program p("dot");
  const OpId x = p.add_op(parameter("x", 0, f32({64, 256})));
  const OpId w = p.add_op(parameter("w", 1, f32({256, 512})));
  Op dot = make_op("mm", "dot", f32({64, 512}));
  dot.dot = DotDims{{1}, {0}, {}, {}};
  p.add_op(dot, {x, w});
  return Kernel("dot", std::move(p));
}

// NHWC [1,8,8,3] conv HWIO [3,3,3,16], 3x3 window, padding 1 -> [1,8,8,16]
Kernel conv_kernel() {
  Program p("conv");
  const OpId in = p.add_op(parameter("in", 0, f32({1, 8, 8, 3})));
  const OpId k = p.add_op(parameter("k", 1, f32({3, 3, 3, 16})));
  Op conv = make_op("conv", "convolution", f32({1, 8, 8, 16}));
  conv.convolution = ConvolutionDims{0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  conv.window = Window{{3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}};
  p.add_op(conv, {in, k});
  return Kernel("conv", std::move(p));
}

// Depthwise (16 groups of one channel) 3x3 conv, dilated by 2 and padded 2: NHWC [1,8,8,16] with
// HWIO [3,3,1,16] -> [1,8,8,16]. The kernel's input features are per group, so is the work.
Kernel depthwise_dilated_kernel() {
  Program p("depthwise");
  const OpId in = p.add_op(parameter("in", 0, f32({1, 8, 8, 16})));
  const OpId k = p.add_op(parameter("k", 1, f32({3, 3, 1, 16})));
  Op conv = make_op("conv", "convolution", f32({1, 8, 8, 16}));
  conv.convolution = ConvolutionDims{0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}};
  conv.convolution->feature_group_count = 16;
  conv.window = Window{{3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, {1, 1}};
  p.add_op(conv, {in, k});
  return Kernel("depthwise", std::move(p));
}

// sum over dim 1 of [32,1000] -> [32]
Kernel reduce_kernel() {
  Program p("reduce");
  const OpId x = p.add_op(parameter("x", 0, f32({32, 1000})));
  const OpId init = p.add_op(make_op("zero", "constant", f32({})));
  Op reduce = make_op("sum", "reduce", f32({32}));
  reduce.dimensions = {1};
  p.add_op(reduce, {x, init});
  return Kernel("reduce", std::move(p));
}

Kernel add_kernel() {
  Program p("add");
  const OpId a = p.add_op(parameter("a", 0, f32({128, 256})));
  const OpId b = p.add_op(parameter("b", 1, f32({128, 256})));
  p.add_op(make_op("sum", "add", f32({128, 256})), {a, b});
  return Kernel("add", std::move(p));
}

OpCost cost_of_root(const Kernel& kernel) {
  const Program& body = kernel.body();
  const OpId root = body.root();
  std::vector<const Shape*> operands;
  for (OpId operand : body.operands(root)) operands.push_back(&body.op(operand).shape);
  return op_cost(body.op(root), operands);
}

TEST_CASE("op FLOP and byte counts match hand-computed values") {
  struct Row {
    const char* name;
    Kernel (*make)();
    double flops, bytes_read, bytes_written;
  };
  const Row row = GENERATE(values<Row>({
      // 2 * 64 * 512 * 256; (64*256 + 256*512) * 4; 64*512*4
      {"dot", dot_kernel, 16'777'216.0, 589'824.0, 131'072.0},
      // 2 * (1*8*8*16) * (3*3*3); (192 + 432) * 4; 1024 * 4
      {"convolution", conv_kernel, 55'296.0, 2'496.0, 4'096.0},
      // 2 * (1*8*8*16) * (3*3*1): one input feature per group; (1024 + 144) * 4; 1024 * 4
      {"depthwise dilated convolution", depthwise_dilated_kernel, 18'432.0, 4'672.0, 4'096.0},
      // 32*1000 - 32 combiner applications; 32000*4 + 4 (init); 32*4
      {"reduce", reduce_kernel, 31'968.0, 128'004.0, 128.0},
      // one add per element; two operands; one result
      {"elementwise", add_kernel, 32'768.0, 262'144.0, 131'072.0},
  }));
  CAPTURE(row.name);
  const OpCost cost = cost_of_root(row.make());
  CHECK(cost.flops == row.flops);
  CHECK(cost.bytes_read == row.bytes_read);
  CHECK(cost.bytes_written == row.bytes_written);
}

TEST_CASE("kernel cost counts inputs and outputs once and every op's work") {
  SECTION("a single dot") {
    const KernelCost cost = kernel_cost(dot_kernel());
    CHECK(cost.matrix_flops == 16'777'216.0);
    CHECK(cost.vector_flops == 0.0);
    CHECK(cost.bytes_read == 589'824.0);
    CHECK(cost.bytes_written == 131'072.0);
  }
  SECTION("a fused chain keeps its intermediate on chip") {
    Program p("chain");
    const OpId x = p.add_op(parameter("x", 0, f32({64, 256})));
    const OpId e = p.add_op(make_op("e", "exponential", f32({64, 256})), {x});
    p.add_op(make_op("n", "negate", f32({64, 256})), {e});
    const KernelCost cost = kernel_cost(Kernel("chain", std::move(p)));
    CHECK(cost.vector_flops == 2.0 * 64 * 256);
    CHECK(cost.bytes_read == 64.0 * 256 * 4);
    CHECK(cost.bytes_written == 64.0 * 256 * 4);
  }
}

TEST_CASE("flatten inlines nested fusions and expands tuple outputs") {
  // inner(p0, p1) = (p0 + p1, exp(p0)); the kernel body calls it through a fusion op.
  auto inner = std::make_shared<Program>("fused_computation");
  {
    const OpId p0 = inner->add_op(parameter("p0", 0, f32({16, 128})));
    const OpId p1 = inner->add_op(parameter("p1", 1, f32({16, 128})));
    const OpId sum = inner->add_op(make_op("sum", "add", f32({16, 128})), {p0, p1});
    const OpId ex = inner->add_op(make_op("ex", "exponential", f32({16, 128})), {p0});
    Op tuple = make_op("t", "tuple", Shape{ElementType::kTuple, {}, {}, {f32({16, 128}), f32({16, 128})}});
    inner->set_root(inner->add_op(tuple, {sum, ex}));
  }
  Program body("fusion.1");
  const OpId a = body.add_op(parameter("a", 0, f32({16, 128})));
  const OpId b = body.add_op(parameter("b", 1, f32({16, 128})));
  Op fusion = make_op("fusion.1", "fusion", Shape{ElementType::kTuple, {}, {}, {f32({16, 128}), f32({16, 128})}});
  fusion.called = {inner};
  body.add_op(fusion, {a, b});

  const FlatKernel flat = flatten_kernel(body);
  REQUIRE(flat.inputs.size() == 2);
  CHECK(flat.ops[static_cast<std::size_t>(flat.inputs[0])].op->name == "a");
  CHECK(flat.ops[static_cast<std::size_t>(flat.inputs[1])].op->name == "b");
  REQUIRE(flat.outputs.size() == 2);
  CHECK(flat.ops[static_cast<std::size_t>(flat.outputs[0])].op->name == "sum");
  CHECK(flat.ops[static_cast<std::size_t>(flat.outputs[1])].op->name == "ex");
  // The add reads the kernel's own parameters, not the nested ones.
  const FlatOp& sum = flat.ops[static_cast<std::size_t>(flat.outputs[0])];
  CHECK(sum.operands == std::vector<int>{flat.inputs[0], flat.inputs[1]});

  const KernelCost cost = kernel_cost(flat);
  CHECK(cost.vector_flops == 2.0 * 16 * 128);
  CHECK(cost.bytes_read == 2.0 * 16 * 128 * 4);
  CHECK(cost.bytes_written == 2.0 * 16 * 128 * 4);
}

TEST_CASE("an input handed straight back out is not a written output") {
  Program body("state");
  const OpId a = body.add_op(parameter("a", 0, f32({1024})));
  const OpId b = body.add_op(parameter("b", 1, f32({1024})));
  const OpId sum = body.add_op(make_op("sum", "add", f32({1024})), {a, b});
  Op tuple = make_op("t", "tuple", Shape{ElementType::kTuple, {}, {}, {f32({1024}), f32({1024})}});
  body.add_op(tuple, {a, sum});
  const FlatKernel flat = flatten_kernel(body);
  REQUIRE(flat.outputs.size() == 1);
  CHECK(flat.ops[static_cast<std::size_t>(flat.outputs[0])].op->name == "sum");
  CHECK(kernel_cost(flat).bytes_written == 1024.0 * 4);
}

TEST_CASE("ops are classified by the unit they keep busy") {
  CHECK(classify_op(make_op("d", "dot", f32({2}))) == OpClass::kMatrix);
  CHECK(classify_op(make_op("c", "convolution", f32({2}))) == OpClass::kMatrix);
  CHECK(classify_op(make_op("r", "reduce", f32({2}))) == OpClass::kReduce);
  CHECK(classify_op(make_op("a", "add", f32({2}))) == OpClass::kVector);
  CHECK(classify_op(make_op("b", "broadcast", f32({2}))) == OpClass::kFree);
  CHECK(classify_op(make_op("t", "transpose", f32({2}))) == OpClass::kDataMovement);
  CHECK(classify_op(make_op("g", "some-new-op", f32({2}))) == OpClass::kDataMovement);
}

}  // namespace
}  // namespace perftune
