#pragma once
// How sharply a recording tells its optimum apart from the configs next to it in runtime.
//
// A recording's runtime is itself an estimate (Kernel Tuner's "time" is the mean of its "times",
// 32 repeats on the bundled GPUs), so its optimum is known only to within that mean's standard
// error. Where many configs lie within a few standard errors of the optimum, the last part of
// P(b) = 1 rewards finding one config among several the recording cannot rank (on
// dedispersion/A6000, 184 configs are within two standard errors of it). The experiment reports
// this beside the score rather than changing the score: P stays comparable with Kernel Tuner's
// methodology, and a reader sees where its last percent measures noise.
#include <cstddef>
#include <optional>

#include <nlohmann/json.hpp>

#include "ir/corpus.h"

namespace perftune {

struct OptimumNoise {
  std::size_t repeats = 0;                // runs behind the optimum's recorded runtime
  double relative_standard_error = 0.0;   // of the optimum's runtime: coefficient of variation / sqrt(repeats)
  // Valid configs (the optimum included) whose recorded runtime is within kTiedStandardErrors
  // standard errors of the optimum's: the recording does not rank these against the optimum.
  std::size_t tied_configs = 0;
};

// Two standard errors: about a 95% interval around the optimum's mean.
inline constexpr double kTiedStandardErrors = 2.0;

// For the first recording of each config of `kernel` (what replay serves). Empty when the fastest
// config has fewer than two repeats (no spread to estimate) or there is no valid measurement.
std::optional<OptimumNoise> optimum_noise(const MeasuredKernel& kernel);

// {"repeats", "relative_standard_error", "tied_configs"}, or null when unknown (summary.json).
nlohmann::ordered_json to_json(const std::optional<OptimumNoise>& noise);

}  // namespace perftune
