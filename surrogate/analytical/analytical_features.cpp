#include "surrogate/analytical/analytical_features.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace perftune {

namespace {
// Floors before taking logs: 1 ps is far below any kernel's parts (a launch alone is ~1 us), one
// byte / one FLOP below any array's; they only keep ln(0) out of the features.
constexpr double kMinSeconds = 1e-12;
constexpr double kMinCount = 1.0;

float ln_seconds(double seconds) { return static_cast<float>(std::log(std::max(seconds, kMinSeconds))); }
}  // namespace

void analytical_features(const AnalyticalModel& model, const Kernel& kernel, const SearchSpace& space,
                         std::span<const Config> configs, std::span<float> out) {
  if (out.size() != configs.size() * kAnalyticalFeatureWidth)
    throw std::invalid_argument("analytical feature buffer has the wrong size");
  const std::vector<TileEstimate> estimates = model.estimates(kernel, space, configs);
  const double onchip = static_cast<double>(std::max<std::int64_t>(model.spec().onchip_bytes, 1));
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const TileEstimate& e = estimates[c];
    double roofline = e.seconds;
    if (!e.feasible) {
      roofline = std::max(e.compute_seconds, e.memory_seconds) + e.overhead_seconds;
      if (!(roofline > 0)) roofline = kInfeasibleSeconds;  // nothing to go by (an illegal fusion)
    }
    float* row = out.data() + c * kAnalyticalFeatureWidth;
    row[0] = 1.0f;
    row[kAnalyticalLogSeconds] = static_cast<float>(std::log(e.seconds));  // as AnalyticalModel::predict
    row[2] = e.feasible ? 0.0f : 1.0f;
    row[3] = ln_seconds(roofline);
    row[4] = ln_seconds(e.compute_seconds);
    row[5] = ln_seconds(e.memory_seconds);
    row[6] = ln_seconds(e.overhead_seconds);
    row[7] = static_cast<float>(std::log2(std::max(e.working_set_bytes, kMinCount) / onchip));
    row[8] = static_cast<float>(std::log2(std::max(e.padded_flops, kMinCount) / std::max(e.useful_flops, kMinCount)));
  }
}

}  // namespace perftune
