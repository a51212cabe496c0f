// The ONNX importer on small models built here: what it makes of a network, and a one-line
// InputError naming the file, the node or input and what was expected for each kind of bad input.
#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include "frontend/network_summary.h"
#include "frontend/onnx_import.h"
#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/program_json.h"

namespace perftune::frontend {
namespace {

namespace fs = std::filesystem;

// A model with one float input "x" of `dims` (a dimension < 0 is dynamic, named "batch").
struct ModelMaker {
  onnx::ModelProto model;
  onnx::GraphProto* graph;

  explicit ModelMaker(const Dims& dims, std::int64_t opset = 13) {
    model.set_ir_version(8);
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("small");
    input("x", dims);
  }
  void input(const std::string& name, const Dims& dims) {
    auto* in = graph->add_input();
    in->set_name(name);
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (std::int64_t d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d < 0) dim->set_dim_param("batch");
      else dim->set_dim_value(d);
    }
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output) {
    auto* n = graph->add_node();
    n->set_op_type(op);
    n->set_name(output + "_node");
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  void weight(const std::string& name, const Dims& dims, float value) {
    auto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    std::int64_t count = 1;
    for (std::int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    for (std::int64_t i = 0; i < count; ++i) t->add_float_data(value);
  }
  void ints(const std::string& name, const Dims& values) {
    auto* t = graph->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (std::int64_t v : values) t->add_int64_data(v);
  }
  // The checker wants every graph output's shape declared (a dimension < 0 is dynamic).
  void output(const std::string& name, const Dims& dims) {
    auto* o = graph->add_output();
    o->set_name(name);
    auto* t = o->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
    for (std::int64_t d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (d < 0) dim->set_dim_param("batch");
      else dim->set_dim_value(d);
    }
  }
  std::string bytes() const { return model.SerializeAsString(); }
};

void set_ints(onnx::NodeProto* n, const std::string& name, const Dims& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (std::int64_t v : values) a->add_ints(v);
}

// A conv + bias + relu block twice, then a reshape whose shape is computed by Shape -> Gather ->
// Unsqueeze -> Concat, as exporters write it.
ModelMaker conv_net() {
  ModelMaker m({1, 4, 8, 8});
  for (int layer = 0; layer < 2; ++layer) {
    const std::string in = layer == 0 ? "x" : "r0", w = "w" + std::to_string(layer), b = "b" + std::to_string(layer);
    m.weight(w, {4, 4, 3, 3}, 0.1f);
    m.weight(b, {4}, 0.5f);
    auto* conv = m.node("Conv", {in, w, b}, "c" + std::to_string(layer));
    set_ints(conv, "pads", {1, 1, 1, 1});
    m.node("Relu", {"c" + std::to_string(layer)}, "r" + std::to_string(layer));
  }
  m.node("Shape", {"r1"}, "shape");
  m.ints("zero", {0});
  auto* gather = m.node("Gather", {"shape", "zero"}, "batch");
  (void)gather;
  m.ints("minus_one", {-1});
  m.node("Concat", {"batch", "minus_one"}, "target")->add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto_AttributeType_INT);
    a.set_i(0);
    return a;
  }());
  m.node("Reshape", {"r1", "target"}, "y");
  m.output("y", {1, 256});
  return m;
}

std::string error_of(const std::string& bytes, const OnnxImportOptions& options = {}) {
  try {
    (void)import_onnx_bytes(bytes, "model.onnx", options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("an ONNX network becomes a program: weights as parameters, shape arithmetic folded", "[frontend]") {
  const ImportedNetwork net = import_onnx_bytes(conv_net().bytes(), "model.onnx");
  const Program& p = net.program;
  CHECK(net.input_names == std::vector<std::string>{"x"});
  REQUIRE(net.outputs.size() == 1);
  CHECK(p.op(net.outputs[0]).shape.dims == Dims{1, 256});
  CHECK(net.folded_nodes == 2);  // Gather and Concat; Shape's value is known without folding
  int weights = 0, convolutions = 0;
  for (OpId id = 0; id < p.size(); ++id) {
    weights += p.op(id).weight ? 1 : 0;
    convolutions += p.op(id).opcode == "convolution" ? 1 : 0;
    if (p.op(id).weight) CHECK(p.op(id).literal);
  }
  CHECK(weights == 4);
  CHECK(convolutions == 2);
  // The two blocks are the same kernel under greedy fusion.
  const NetworkSummary s = summarize_network(net, 0.0);
  CHECK(s.kernels == 3);  // two conv blocks and the reshape
  CHECK(s.unique_kernels == 2);
  // Saved and loaded again, the program keeps its weight flags but not their values.
  const Program again = program_from_json(JsonView(nlohmann::json::parse(program_to_json(p).dump()), "saved.json"));
  CHECK(content_key(again) == content_key(p));
}

TEST_CASE("constants are copied into each kernel that reads them, never fused or made inputs", "[frontend]") {
  ModelMaker m({2, 3});
  auto* c = m.graph->add_node();
  c->set_op_type("Constant");
  c->add_output("two");
  auto* a = c->add_attribute();
  a->set_name("value_float");
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(2.0f);
  m.node("Mul", {"x", "two"}, "m");
  m.node("Tanh", {"m"}, "t");
  m.node("Add", {"t", "two"}, "y");
  m.output("y", {2, 3});
  const Program p = import_onnx_bytes(m.bytes(), "model.onnx").program;
  const FusionPlan plan = partition(p, FusionConfig::none(p));
  for (const FusedKernel& k : plan.kernels) {
    for (OpId input : k.inputs) CHECK(!p.op(input).is_constant());
    for (OpId id = 0; id < k.kernel.body().size(); ++id)
      if (k.kernel.body().op(id).is_constant()) CHECK(k.kernel.body().op(id).literal->at(0) == 2.0f);
  }
}

TEST_CASE("bad ONNX input is one InputError naming the file, the place and what was expected", "[frontend]") {
  SECTION("truncated or not ONNX") {
    const std::string bytes = conv_net().bytes();
    CHECK_THAT(error_of(bytes.substr(0, bytes.size() / 2)), Catch::Contains("model.onnx") && Catch::Contains("ModelProto"));
    CHECK_THAT(error_of("not a model at all"), Catch::Contains("ModelProto"));
  }
  SECTION("a dynamic dimension names the input and the option that fixes it") {
    ModelMaker m({-1, 3});
    m.node("Relu", {"x"}, "y");
    m.output("y", {-1, 3});
    const std::string error = error_of(m.bytes());
    CHECK_THAT(error, Catch::Contains("input 'x'") && Catch::Contains("'batch'") && Catch::Contains("--input x=1x3"));
    OnnxImportOptions fixed;
    fixed.input_shapes["x"] = {5, 3};
    CHECK(import_onnx_bytes(m.bytes(), "model.onnx", fixed).program.op(0).shape.dims == Dims{5, 3});
  }
  SECTION("an unknown op names the node, the op and the opset") {
    ModelMaker m({2, 3});
    m.node("Celu", {"x"}, "y");
    m.output("y", {2, 3});
    CHECK_THAT(error_of(m.bytes()), Catch::Contains("node 'y_node' (Celu, opset 13)") && Catch::Contains("not supported"));
  }
  SECTION("an unsupported attribute value") {
    ModelMaker m({1, 1, 4, 4});
    m.ints("pads", {0, 0, 1, 1, 0, 0, 1, 1});
    auto* pad = m.node("Pad", {"x", "pads"}, "y");
    auto* mode = pad->add_attribute();
    mode->set_name("mode");
    mode->set_type(onnx::AttributeProto_AttributeType_STRING);
    mode->set_s("reflect");
    m.output("y", {1, 1, 6, 6});
    CHECK_THAT(error_of(m.bytes()), Catch::Contains("(Pad, opset 13)") && Catch::Contains("'reflect' padding is not supported"));
  }
  SECTION("dangling names and cycles") {
    ModelMaker m({2, 3});
    m.node("Relu", {"nowhere"}, "y");
    m.output("y", {2, 3});
    CHECK_THAT(error_of(m.bytes()), Catch::Contains("model.onnx"));
    ModelMaker cyclic({2, 3});
    cyclic.node("Add", {"x", "b"}, "a");
    cyclic.node("Relu", {"a"}, "b");
    cyclic.output("b", {2, 3});
    CHECK_THAT(error_of(cyclic.bytes()), Catch::Contains("model.onnx"));
  }
  SECTION("a huge declared dimension") {
    ModelMaker m({1, 1000000, 1000000, 1000000});
    m.node("Relu", {"x"}, "y");
    m.output("y", {1, 1000000, 1000000, 1000000});
    CHECK_THAT(error_of(m.bytes()), Catch::Contains("input 'x'"));
  }
  SECTION("an --input for no input, and a malformed one") {
    OnnxImportOptions o;
    o.input_shapes["nope"] = {1};
    CHECK_THAT(error_of(conv_net().bytes(), o), Catch::Contains("--input nope"));
    CHECK_THROWS_AS(parse_dims("1x-3", "--input x"), InputError);
    CHECK(parse_dims("1x3x224x224", "--input x") == Dims{1, 3, 224, 224});
  }
  SECTION("a file that is not a regular file, or is missing") {
    const fs::path dir = fs::temp_directory_path() / "perftune_onnx_fifo";
    fs::create_directories(dir);
    const fs::path fifo = dir / "model.onnx";
    fs::remove(fifo);
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(import_onnx(fifo.string()), Catch::Contains("regular file"));
    fs::remove_all(dir);
    CHECK_THROWS_AS(import_onnx((dir / "missing.onnx").string()), InputError);
  }
}

}  // namespace
}  // namespace perftune::frontend

namespace perftune::frontend {
namespace {

// fuzz_onnx's first finding: a Split of a scalar read past its shape (an axis of a rank-0 input).
TEST_CASE("an axis of a scalar is an InputError, not a crash", "[frontend][fuzz]") {
  const std::string path = std::string(PERFTUNE_TEST_DIR) + "/fixtures/fuzz_onnx/split_of_scalar.onnx";
  CHECK_THROWS_WITH(import_onnx(path), Catch::Contains("rank 1 or more"));
}

}  // namespace
}  // namespace perftune::frontend

namespace perftune::frontend {
namespace {

// fuzz_onnx's second finding: libonnx's shape inference of ConvTranspose crashed on the model's
// attributes; an op the frontend does not take is now refused before ONNX's checks run.
TEST_CASE("an op the frontend does not take is refused before ONNX's shape inference", "[frontend][fuzz]") {
  const std::string path = std::string(PERFTUNE_TEST_DIR) + "/fixtures/fuzz_onnx/conv_transpose_attributes.onnx";
  CHECK_THROWS_AS(import_onnx(path), InputError);
  // The third: a stride of 0 divided by in ONNX's convolution and pooling shape inference.
  CHECK_THROWS_AS(import_onnx(std::string(PERFTUNE_TEST_DIR) + "/fixtures/fuzz_onnx/pool_stride_zero.onnx"), InputError);
}

}  // namespace
}  // namespace perftune::frontend
