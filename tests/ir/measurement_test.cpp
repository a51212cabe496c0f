// The one definition of a valid runtime and cost, and how seconds read in messages.
#include <catch2/catch.hpp>

#include <cmath>

#include "ir/measurement.h"

using namespace perftune;

TEST_CASE("a runtime is finite and above 0") {
  CHECK_FALSE(runtime_problem(1e-9));
  CHECK(runtime_problem(0.0).value().find("0 s") != std::string::npos);
  CHECK(runtime_problem(-3e-7).value().find("-3e-07 s") != std::string::npos);  // was "-0.000000 s"
  CHECK(runtime_problem(NAN));
  CHECK(runtime_problem(INFINITY));
}

TEST_CASE("a cost is finite, non-negative and at most a week") {
  CHECK_FALSE(cost_problem(0.0));
  CHECK_FALSE(cost_problem(kMaxCostSeconds));
  CHECK(cost_problem(1e300).value().find("more than a week") != std::string::npos);
  CHECK(cost_problem(-1.0));
  CHECK(cost_problem(NAN));
}

TEST_CASE("seconds in messages keep their significant digits") {
  CHECK(seconds_text(-3e-7) == "-3e-07 s");
  CHECK(seconds_text(0.25) == "0.25 s");
}
