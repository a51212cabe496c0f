#include <catch2/catch.hpp>

#include "experiments/scoring/optimum_noise.h"

using namespace perftune;

TEST_CASE("optimum noise: the optimum's standard error and the configs within two of it") {
  Config best{{1}}, near{{2}}, edge{{3}}, far{{4}}, broken{{5}};
  MeasuredKernel kernel;
  // The optimum: repeats 0.9 and 1.1, median 1.0, coefficient of variation sqrt(0.02) / 1.0,
  // standard error sqrt(0.02) / sqrt(2) = 0.1, so a config ties up to 1.0 * (1 + 2 * 0.1) = 1.2.
  kernel.measurements = {{near, MeasureResult::from_repeats({1.15}, 0.0)},
                         {best, MeasureResult::from_repeats({0.9, 1.1}, 0.0)},
                         {edge, MeasureResult::from_repeats({1.19, 1.21, 1.19}, 0.0)},
                         {far, MeasureResult::from_repeats({1.25}, 0.0)},
                         {broken, MeasureResult::failure(MeasureStatus::kRuntimeError, "no")},
                         {far, MeasureResult::from_repeats({1.05}, 0.0)}};  // a duplicate: replay serves the first
  const auto noise = optimum_noise(kernel);
  REQUIRE(noise.has_value());
  REQUIRE(noise->repeats == 2);
  REQUIRE(noise->relative_standard_error == Approx(0.1));
  REQUIRE(noise->tied_configs == 3);  // best, near and edge (median 1.19); not far, not the failure
}

TEST_CASE("optimum noise is unknown without repeats at the optimum or without a valid measurement") {
  MeasuredKernel single;
  single.measurements = {{Config{{1}}, MeasureResult::from_repeats({1.0}, 0.0)},
                         {Config{{2}}, MeasureResult::from_repeats({2.0, 2.2}, 0.0)}};
  REQUIRE_FALSE(optimum_noise(single).has_value());  // the fastest has one run: no spread to estimate
  MeasuredKernel failed;
  failed.measurements = {{Config{{1}}, MeasureResult::failure(MeasureStatus::kCompileError, "no")}};
  REQUIRE_FALSE(optimum_noise(failed).has_value());
}
