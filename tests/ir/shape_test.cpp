// The one definition of a valid dimension and shape, and the program reader that applies it.
#include <catch2/catch.hpp>

#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/program_json.h"
#include "ir/shape.h"

using namespace perftune;

namespace {

Program program_with_shape(const std::string& dimensions) {
  const std::string text = R"({"name": "p", "ops": [{"name": "x", "opcode": "parameter", "shape": [)" + dimensions +
                           R"(], "parameter_number": 0}]})";
  const nlohmann::json json = parse_json_text(text, "p.json");
  return program_from_json(JsonView(json, "p.json"));
}

}  // namespace

TEST_CASE("a dimension is in [0, 2^32]; a shape holds at most 2^40 elements") {
  CHECK_FALSE(dimension_problem(0));
  CHECK_FALSE(dimension_problem(kMaxDimension));
  CHECK(dimension_problem(-1));
  CHECK(dimension_problem(kMaxDimension + 1));
  CHECK(dimension_problem(std::int64_t{1} << 62));
  CHECK_FALSE(shape_problem(make_shape(ElementType::kF32, {1 << 20, 1 << 20})));
  CHECK(shape_problem(make_shape(ElementType::kF32, {1 << 20, 1 << 20, 2})));
  CHECK_FALSE(shape_problem(make_shape(ElementType::kF32, {kMaxDimension, 0, kMaxDimension})));
  // Four dimensions at the limit would overflow int64 in a plain product; the check cannot.
  CHECK(shape_problem(make_shape(ElementType::kF32, {kMaxDimension, kMaxDimension, kMaxDimension, kMaxDimension})));
}

TEST_CASE("program JSON rejects dimensions that would overflow, with the place and the bound") {
  CHECK_NOTHROW(program_with_shape("4, 4096"));
  const auto [dimension, words] = GENERATE(table<std::string, std::string>({
      {"-1", "not -1"},
      {"4611686018427387904", "2^32"},           // 2^62: made `tune` allocate without bound
      {"4611686018427387905", "2^32"},
      {"9223372036854775808", "below 2^63"},     // 2^63: was "a non-negative dimension"
      {"1e300", "at most 2^53"},                 // was "a number with a fraction"
  }));
  CAPTURE(dimension);
  CHECK_THROWS_WITH(program_with_shape("4, " + dimension), Catch::Contains("p.json: $.ops[0].shape[1]") && Catch::Contains(words));
  CHECK_THROWS_WITH(program_with_shape("4294967296, 4294967296"), Catch::Contains("p.json: $.ops[0].shape:") && Catch::Contains("2^40"));
}
