#pragma once
// How the runners time a kernel after its warm-up run: samples of enough calls to last
// min_sample (doubled until they do, as Python's timeit autorange), until the samples' CV is at
// most target_cv after min_repeats, at max_repeats, or once the budget is spent (with at least 3
// samples, or 3x the budget). A kernel slower than the whole budget is timed by its warm-up run
// alone: a second run would double the cost of the slowest configs (an unscheduled 1024^3
// matmul runs 15 s) for a figure within a few percent of the first.
#include <chrono>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

namespace perftune {

struct SampleTiming {
  int min_repeats = 5, max_repeats = 30;
  double target_cv = 0.02, budget = 1.0, min_sample = 1e-3;

  // The request's "timing" object; absent fields keep their defaults.
  static SampleTiming from_json(const nlohmann::json& timing) {
    SampleTiming t;
    t.min_repeats = timing.value("min_repeats", t.min_repeats);
    t.max_repeats = timing.value("max_repeats", t.max_repeats);
    t.target_cv = timing.value("target_cv", t.target_cv);
    t.budget = timing.value("budget", t.budget);
    t.min_sample = timing.value("min_sample", t.min_sample);
    return t;
  }
};

inline double coefficient_of_variation(const std::vector<double>& xs) {
  double mean = 0, var = 0;
  for (double x : xs) mean += x;
  mean /= static_cast<double>(xs.size());
  for (double x : xs) var += (x - mean) * (x - mean);
  var /= static_cast<double>(xs.size() > 1 ? xs.size() - 1 : 1);
  return mean > 0 ? std::sqrt(var) / mean : 0.0;
}

// Seconds per call of `run`, one entry per sample; `warm_up_seconds` is the warm-up run's time.
template <typename Run>
std::vector<double> time_samples(Run&& run, double warm_up_seconds, const SampleTiming& timing) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  if (warm_up_seconds >= timing.budget) return {warm_up_seconds};
  const auto start = Clock::now();
  long calls = 1;
  for (;;) {
    const auto t = Clock::now();
    for (long c = 0; c < calls; ++c) run();
    if (since(t) >= timing.min_sample || calls >= (1L << 30)) break;
    calls *= 2;
  }
  std::vector<double> samples;
  while (static_cast<int>(samples.size()) < timing.max_repeats) {
    const auto t = Clock::now();
    for (long c = 0; c < calls; ++c) run();
    samples.push_back(since(t) / static_cast<double>(calls));
    const double spent = since(start);
    if (static_cast<int>(samples.size()) >= timing.min_repeats && coefficient_of_variation(samples) <= timing.target_cv) break;
    if (spent >= timing.budget && (samples.size() >= 3 || spent >= 3 * timing.budget)) break;
  }
  return samples;
}

}  // namespace perftune
