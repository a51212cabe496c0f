// The reference interpreter against values worked out by hand, so that a mistake shared by
// the interpreter and the code generator (both read op_semantics) cannot hide.
#include "hardware/reference/reference_interpreter.h"

#include "hardware/reference/op_semantics.h"
#include "hardware_test_support.h"

namespace perftune {
namespace {

std::vector<float> run(const std::string& text, const std::vector<std::vector<float>>& inputs) {
  const Program program = program_from_text(text);
  return interpret(program, inputs)[program.root()];
}

TEST_CASE("interpreter: dot, transpose, broadcast by hand", "[hardware][reference]") {
  // [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]
  CHECK(run(R"({"name": "mm", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [2, 3], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [3, 2], "parameter_number": 1},
    {"name": "y", "opcode": "dot", "operands": ["a", "b"], "shape": [2, 2], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})",
            {{1, 2, 3, 4, 5, 6}, {1, 0, 0, 1, 1, 1}}) == std::vector<float>{4, 5, 10, 11});
  CHECK(run(R"({"name": "t", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [2, 3], "parameter_number": 0},
    {"name": "y", "opcode": "transpose", "operands": ["a"], "shape": [3, 2], "dimensions": [1, 0]}]})",
            {{1, 2, 3, 4, 5, 6}}) == std::vector<float>{1, 4, 2, 5, 3, 6});
  CHECK(run(R"({"name": "bc", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [2], "parameter_number": 0},
    {"name": "y", "opcode": "broadcast", "operands": ["a"], "shape": [2, 3], "dimensions": [0]}]})",
            {{7, 8}}) == std::vector<float>{7, 7, 7, 8, 8, 8});
}

TEST_CASE("interpreter: padded convolution and max pool by hand", "[hardware][reference]") {
  // A 3x3 all-ones input convolved with a 3x3 all-ones kernel, padding 1: each output counts the
  // in-range neighbours (corners 4, edges 6, centre 9).
  CHECK(run(R"({"name": "c", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [1, 1, 3, 3], "parameter_number": 0},
    {"name": "k", "opcode": "parameter", "shape": [1, 1, 3, 3], "parameter_number": 1},
    {"name": "y", "opcode": "convolution", "operands": ["x", "k"], "shape": [1, 1, 3, 3],
     "window": {"size": [3, 3], "pad_low": [1, 1], "pad_high": [1, 1]},
     "convolution": {"input_batch": 0, "input_feature": 1, "input_spatial": [2, 3], "kernel_input_feature": 1,
                     "kernel_output_feature": 0, "kernel_spatial": [2, 3], "output_batch": 0, "output_feature": 1,
                     "output_spatial": [2, 3]}}]})",
            {std::vector<float>(9, 1.0f), std::vector<float>(9, 1.0f)}) == std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4});
  CHECK(run(R"({"name": "p", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [2, 4], "parameter_number": 0},
    {"name": "y", "opcode": "reduce-window", "operands": ["x"], "shape": [1, 2], "called": ["max_body"],
     "window": {"size": [2, 2], "stride": [2, 2]}}], "computations": [{"name": "max_body", "root": "m", "ops": [{"name": "a", "opcode": "parameter", "shape": [], "parameter_number": 0}, {"name": "b", "opcode": "parameter", "shape": [], "parameter_number": 1}, {"name": "m", "opcode": "maximum", "operands": ["a", "b"], "shape": []}]}]})",
            {{1, 5, 2, 0, 3, 4, -1, 7}}) == std::vector<float>{5, 7});
  CHECK(run(R"({"name": "r", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [2, 3], "parameter_number": 0},
    {"name": "i", "opcode": "parameter", "shape": [], "parameter_number": 1},
    {"name": "y", "opcode": "reduce", "operands": ["x", "i"], "shape": [3], "dimensions": [0]}]})",
            {{1, 2, 3, 4, 5, 6}, {10}}) == std::vector<float>{15, 17, 19});
}

TEST_CASE("interpreter rejects what the backend cannot run, naming the op", "[hardware][reference]") {
  const Program program = program_from_text(R"({"name": "h", "ops": [
    {"name": "x", "opcode": "parameter", "type": "bf16", "shape": [2], "parameter_number": 0},
    {"name": "y", "opcode": "negate", "operands": ["x"], "type": "bf16", "shape": [2]}]})");
  CHECK_THROWS_WITH(interpret(program, {{1, 2}}), Catch::Contains("'x'") && Catch::Contains("bf16"));
}

}  // namespace
}  // namespace perftune
