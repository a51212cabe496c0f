#include "surrogate/analytical/analytical_features.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "synthetic_kernels.h"

using namespace perftune;

TEST_CASE("the hybrid block carries the analytical model's prediction, and its roofline time where it says infeasible") {
  const bool scratchpad = GENERATE(false, true);
  CAPTURE(scratchpad);
  AnalyticalModel model(testing::small_device(scratchpad));
  const MeasuredKernel k = testing::measured_kernel("mm", 256, 256, 256);
  std::vector<Config> configs;
  for (const auto& m : k.measurements) configs.push_back(m.config);
  std::vector<float> block(configs.size() * kAnalyticalFeatureWidth), predicted(configs.size());
  analytical_features(model, k.kernel, *k.space, configs, block);
  model.predict(k.kernel, *k.space, configs, predicted);
  std::size_t infeasible = 0;
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const float* row = block.data() + c * kAnalyticalFeatureWidth;
    CAPTURE(configs[c].to_string());
    REQUIRE(row[0] == 1.0f);
    for (std::size_t i = 0; i < kAnalyticalFeatureWidth; ++i) REQUIRE(std::isfinite(row[i]));
    REQUIRE(row[kAnalyticalLogSeconds] == Approx(predicted[c]).margin(1e-4));
    if (row[2] == 0.0f) {
      REQUIRE(row[3] == Approx(predicted[c]).margin(1e-4));
    } else {
      ++infeasible;
      // The penalty (>= 1000 s) is a ranking device; the roofline column keeps a time the kernel could take.
      REQUIRE(predicted[c] >= std::log(kInfeasibleSeconds) - 1e-3);
      REQUIRE(row[3] < std::log(1.0));
      REQUIRE(row[7] > 0.0f);  // the working set exceeds the scratchpad
    }
  }
  REQUIRE((infeasible > 0) == scratchpad);
  REQUIRE_THROWS_AS(analytical_features(model, k.kernel, *k.space, configs, std::span<float>(block).first(3)),
                    std::invalid_argument);
}
