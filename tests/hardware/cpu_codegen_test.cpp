// Generated kernels for each supported op agree with the reference interpreter on tiny shapes,
// under tiled and untiled configs.
#include "hardware/cpu_codegen.h"

#include "hardware/cpu_tile_space.h"
#include "hardware/elementwise_ops.h"
#include "hardware/op_semantics.h"
#include "hardware_test_support.h"

namespace perftune {
namespace {

std::string binary_program(const std::string& opcode) {
  return R"({"name": "b", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [4, 6], "parameter_number": 0},
    {"name": "z", "opcode": "parameter", "shape": [4, 6], "parameter_number": 1},
    {"name": "y", "opcode": ")" + opcode + R"(", "operands": ["x", "z"], "shape": [4, 6]}]})";
}

// Every config of a kernel's space measured: all must come back ok (checked against the reference).
void expect_all_ok(const Program& program, std::size_t max_configs) {
  const Kernel kernel(program.name(), program);
  const SearchSpace space = cpu_tile_space(kernel);
  std::vector<Config> configs = space.enumerate();
  // First, last and a spread in between: untiled, smallest tiles and mixed ones.
  std::vector<Config> picked;
  for (std::size_t i = 0; i < max_configs && i < configs.size(); ++i)
    picked.push_back(configs[i * (configs.size() - 1) / std::max<std::size_t>(max_configs - 1, 1)]);
  const auto results = shared_cpu_backend().measure(kernel, space, picked);
  for (std::size_t i = 0; i < picked.size(); ++i) {
    CAPTURE(program.name(), picked[i].to_string(), results[i].message);
    CHECK(results[i].status == MeasureStatus::kOk);
    CHECK(results[i].seconds > 0);
  }
}

TEST_CASE("every elementwise op agrees with the reference", "[hardware][codegen]") {
  // One kernel computing all unary ops at once (a chain would saturate), plus binary ones.
  std::string ops = R"({"name": "all_unary", "ops": [{"name": "x", "opcode": "parameter", "shape": [3, 5], "parameter_number": 0})";
  int n = 0;
  std::string last;
  for (const ElementwiseOp& op : elementwise_ops()) {
    if (op.arity != 1) continue;
    const std::string name = "u" + std::to_string(n++);
    ops += R"(, {"name": ")" + name + R"(", "opcode": ")" + std::string(op.opcode) + R"(", "operands": ["x"], "shape": [3, 5]})";
    // Sum them so one output covers every op (each is checked through the sum and alone below).
    const std::string sum = "s" + std::to_string(n);
    ops += R"(, {"name": ")" + sum + R"(", "opcode": "add", "operands": [")" + (last.empty() ? name : last) + R"(", ")" + name + R"("], "shape": [3, 5]})";
    last = sum;
  }
  ops += "]}";
  expect_all_ok(program_from_text(ops), 2);
  for (const char* opcode : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
    CAPTURE(opcode);
    expect_all_ok(program_from_text(binary_program(opcode)), 1);
  }
}

TEST_CASE("structural ops agree with the reference", "[hardware][codegen]") {
  const auto [name, text] = GENERATE(table<std::string, std::string>({
      {"broadcast", R"({"name": "bc", "ops": [
        {"name": "b", "opcode": "parameter", "shape": [5], "parameter_number": 0},
        {"name": "y", "opcode": "broadcast", "operands": ["b"], "shape": [3, 5], "dimensions": [1]}]})"},
      {"transpose", R"({"name": "tr", "ops": [
        {"name": "x", "opcode": "parameter", "shape": [3, 5, 2], "parameter_number": 0},
        {"name": "y", "opcode": "transpose", "operands": ["x"], "shape": [2, 3, 5], "dimensions": [2, 0, 1]}]})"},
      {"reshape", R"({"name": "rs", "ops": [
        {"name": "x", "opcode": "parameter", "shape": [6, 4], "parameter_number": 0},
        {"name": "y", "opcode": "reshape", "operands": ["x"], "shape": [3, 8]}]})"},
  }));
  CAPTURE(name);
  expect_all_ok(program_from_text(text), 3);
}

TEST_CASE("reductions agree with the reference under several tilings", "[hardware][codegen]") {
  const auto [name, text] = GENERATE(table<std::string, std::string>({
      {"matmul", R"({"name": "mm", "ops": [
        {"name": "a", "opcode": "parameter", "shape": [6, 10], "parameter_number": 0},
        {"name": "b", "opcode": "parameter", "shape": [10, 7], "parameter_number": 1},
        {"name": "y", "opcode": "dot", "operands": ["a", "b"], "shape": [6, 7],
         "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})"},
      {"batched matmul", R"({"name": "bmm", "ops": [
        {"name": "a", "opcode": "parameter", "shape": [2, 5, 6], "parameter_number": 0},
        {"name": "b", "opcode": "parameter", "shape": [2, 7, 6], "parameter_number": 1},
        {"name": "y", "opcode": "dot", "operands": ["a", "b"], "shape": [2, 5, 7],
         "dot": {"lhs_contracting": [2], "rhs_contracting": [2], "lhs_batch": [0], "rhs_batch": [0]}}]})"},
      {"conv2d", R"({"name": "conv", "ops": [
        {"name": "x", "opcode": "parameter", "shape": [2, 3, 7, 6], "parameter_number": 0},
        {"name": "k", "opcode": "parameter", "shape": [4, 3, 3, 3], "parameter_number": 1},
        {"name": "y", "opcode": "convolution", "operands": ["x", "k"], "shape": [2, 4, 4, 3],
         "window": {"size": [3, 3], "stride": [2, 2], "pad_low": [1, 1], "pad_high": [1, 0]},
         "convolution": {"input_batch": 0, "input_feature": 1, "input_spatial": [2, 3],
                         "kernel_input_feature": 1, "kernel_output_feature": 0, "kernel_spatial": [2, 3],
                         "output_batch": 0, "output_feature": 1, "output_spatial": [2, 3]}}]})"},
      {"reduce sum", R"({"name": "rsum", "ops": [
        {"name": "x", "opcode": "parameter", "shape": [5, 9], "parameter_number": 0},
        {"name": "y", "opcode": "reduce", "operands": ["x"], "shape": [5], "dimensions": [1]}]})"},
      {"reduce max to scalar", R"({"name": "rmax", "ops": [
        {"name": "x", "opcode": "parameter", "shape": [5, 9], "parameter_number": 0},
        {"name": "y", "opcode": "reduce", "operands": ["x"], "shape": [], "dimensions": [0, 1], "called": ["max_body"]}], "computations": [{"name": "max_body", "root": "m", "ops": [{"name": "a", "opcode": "parameter", "shape": [], "parameter_number": 0}, {"name": "b", "opcode": "parameter", "shape": [], "parameter_number": 1}, {"name": "m", "opcode": "maximum", "operands": ["a", "b"], "shape": []}]}]})"},
      {"max pool", R"({"name": "pool", "ops": [
        {"name": "x", "opcode": "parameter", "shape": [1, 2, 6, 6], "parameter_number": 0},
        {"name": "y", "opcode": "reduce-window", "operands": ["x"], "shape": [1, 2, 3, 3], "called": ["max_body"],
         "window": {"size": [1, 1, 2, 2], "stride": [1, 1, 2, 2]}}], "computations": [{"name": "max_body", "root": "m", "ops": [{"name": "a", "opcode": "parameter", "shape": [], "parameter_number": 0}, {"name": "b", "opcode": "parameter", "shape": [], "parameter_number": 1}, {"name": "m", "opcode": "maximum", "operands": ["a", "b"], "shape": []}]}]})"},
      {"matmul with bias and gelu (output fusion)", R"({"name": "mm_epilogue", "ops": [
        {"name": "a", "opcode": "parameter", "shape": [6, 10], "parameter_number": 0},
        {"name": "b", "opcode": "parameter", "shape": [10, 7], "parameter_number": 1},
        {"name": "c", "opcode": "parameter", "shape": [7], "parameter_number": 2},
        {"name": "d", "opcode": "dot", "operands": ["a", "b"], "shape": [6, 7],
         "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}},
        {"name": "cb", "opcode": "broadcast", "operands": ["c"], "shape": [6, 7], "dimensions": [1]},
        {"name": "s", "opcode": "add", "operands": ["d", "cb"], "shape": [6, 7]},
        {"name": "y", "opcode": "gelu", "operands": ["s"], "shape": [6, 7]}]})"},
  }));
  CAPTURE(name);
  expect_all_ok(program_from_text(text), 3);
}

TEST_CASE("an output fusion kernel accumulates once and applies its epilogue per element", "[hardware][codegen]") {
  const Program program = program_from_text(R"({"name": "f", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [8, 8], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [8, 8], "parameter_number": 1},
    {"name": "d", "opcode": "dot", "operands": ["a", "b"], "shape": [8, 8], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}},
    {"name": "y", "opcode": "tanh", "operands": ["d"], "shape": [8, 8]}]})");
  const Kernel kernel("f", program);
  const SearchSpace space = cpu_tile_space(kernel);
  REQUIRE(space.knob_names() == std::vector<std::string>{"tile.out.0", "tile.out.1", "tile.red"});
  const GeneratedKernel g = generate_cpu_kernel(kernel, space, Config{{4, 8, 2}});
  CHECK(g.loop_nests == 1);
  CHECK(g.buffers.sizes.size() == 3);  // a, b, y: the dot is never written to memory
  CHECK(g.source.find("static float tile_acc") != std::string::npos);
  CHECK(g.source.find("+= 4)") != std::string::npos);  // tile sizes are compile-time constants
}

TEST_CASE("an unsupported opcode is reported as invalid_config naming it", "[hardware][codegen]") {
  const Program program = program_from_text(R"({"name": "s", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [4], "parameter_number": 0},
    {"name": "y", "opcode": "sort", "operands": ["x"], "shape": [4]}]})");
  const Kernel kernel("s", program);
  const SearchSpace space = cpu_tile_space(kernel);
  const Config config = space.enumerate().front();
  const auto results = shared_cpu_backend().measure(kernel, space, std::vector<Config>{config});
  REQUIRE(results.size() == 1);
  CHECK(results[0].status == MeasureStatus::kInvalidConfig);
  CHECK(results[0].message.find("sort") != std::string::npos);
}

}  // namespace
}  // namespace perftune
