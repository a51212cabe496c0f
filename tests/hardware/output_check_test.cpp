// The check of a live kernel's outputs: tight where f32 arithmetic is accurate, and as loose as
// long f32 sums need (a wrong element in a short reduction is caught, rounding in a long one is
// not called wrong).
#include "hardware/reference/output_check.h"

#include <limits>

#include <catch2/catch.hpp>

#include "hardware_test_support.h"

namespace perftune {
namespace {

Program reduce_of(std::int64_t n) {
  return program_from_text(R"({"name": "r", "ops": [
    {"name": "x", "opcode": "parameter", "shape": [)" + std::to_string(n) + R"(], "parameter_number": 0},
    {"name": "y", "opcode": "reduce", "shape": [], "operands": ["x"], "dimensions": [0]}]})");
}

TEST_CASE("the relative tolerance grows as the square root of the longest reduction past 2^16 terms", "[hardware]") {
  CHECK(relative_tolerance(reduce_of(1024)) == Approx(1e-3));
  CHECK(relative_tolerance(reduce_of(65536)) == Approx(1e-3));
  CHECK(relative_tolerance(reduce_of(1 << 20)) == Approx(4e-3));
}

TEST_CASE("an output off by more than the tolerance is named with its first differing element", "[hardware]") {
  const std::vector<float> want = {1.0f, 2.0f, 3.0f};
  CHECK(compare_output({1.0f, 2.0f, 3.0f}, want, "y").empty());
  CHECK(compare_output({1.0f, 2.0005f, 3.0f}, want, "y").empty());  // 2.5e-4 relative + 1e-4 x 3
  const std::string problem = compare_output({1.0f, 2.01f, 3.0f}, want, "y");
  CHECK(problem.find("output y differs from the reference at element 1") != std::string::npos);
  CHECK(compare_output({1.0f, 2.01f, 3.0f}, want, "y", 5e-3).empty());
  CHECK(compare_output({1.0f, 2.0f}, want, "y") == "output y has 2 elements, expected 3");
}

TEST_CASE("where the reference overflows, any overflowed value agrees, and a finite one does not", "[hardware]") {
  // exp(exp(x)) of a generated program: the reference's inf - inf is NaN, a reassociated kernel
  // gets -inf; which non-finite value comes out depends on the order of the overflowing ops.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> want = {1.0f, nan, inf};
  CHECK(compare_output({1.0f, -inf, nan}, want, "y").empty());
  CHECK(compare_output({1.0f, 3.0f, inf}, want, "y").find("element 1") != std::string::npos);
  CHECK(compare_output({1.0f, nan, 3.0f}, want, "y").find("element 2") != std::string::npos);
  CHECK(compare_output({nan, nan, inf}, want, "y").find("element 0") != std::string::npos);
}

}  // namespace
}  // namespace perftune
