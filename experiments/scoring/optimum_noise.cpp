#include "experiments/scoring/optimum_noise.h"

#include <cmath>
#include <vector>

namespace perftune {

std::optional<OptimumNoise> optimum_noise(const MeasuredKernel& kernel) {
  std::vector<const MeasureResult*> first_ok;
  const MeasureResult* fastest = nullptr;
  for (const Measurement* m : kernel.first_recordings()) {
    if (!m->result.ok()) continue;
    first_ok.push_back(&m->result);
    if (!fastest || m->result.seconds < fastest->seconds) fastest = &m->result;
  }
  if (!fastest || fastest->repeats.size() < 2) return std::nullopt;
  OptimumNoise noise;
  noise.repeats = fastest->repeats.size();
  noise.relative_standard_error = fastest->spread / std::sqrt(static_cast<double>(noise.repeats));
  const double limit = fastest->seconds * (1.0 + kTiedStandardErrors * noise.relative_standard_error);
  for (const MeasureResult* result : first_ok)
    if (result->seconds <= limit) ++noise.tied_configs;
  return noise;
}

nlohmann::ordered_json to_json(const std::optional<OptimumNoise>& noise) {
  if (!noise) return nullptr;
  return {{"repeats", noise->repeats},
          {"relative_standard_error", noise->relative_standard_error},
          {"tied_configs", noise->tied_configs}};
}

}  // namespace perftune
