#pragma once
// How the runners time a kernel after its warm-up run: samples of enough calls to last
// min_sample (doubled until they do, as Python's timeit autorange), until the samples' spread is
// at most target_cv after min_repeats, at max_repeats, or once the budget is spent (with at least
// 3 samples, or 3x the budget). The spread is a robust CV, 1.4826 x the median absolute deviation
// over the median (the CV of normal samples): the backend reports the median, which one
// preempted sample does not move, so that sample should not cost 25 more either (with the plain
// CV, most configs of a small kernel ran to max_repeats on one outlier). A kernel slower than the whole budget is timed by its warm-up run
// alone: a second run would double the cost of the slowest configs (an unscheduled 1024^3
// matmul runs for seconds) for a figure within a few percent of the first. One whose run is over
// "single_above" (a multiple of the best config's time, sent by the backend) is timed by one run
// too, but a warm one: the warm-up pays what later calls do not (page faults on intermediate
// buffers the allocator then reuses, cold caches), and on a kernel of large buffers that can be
// tens of times a warm run, so a config judged by its warm-up could be recorded that much slower,
// depending only on whether a fast config was measured before it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

namespace perftune {

struct SampleTiming {
  int min_repeats = 5, max_repeats = 30;
  double target_cv = 0.02, budget = 1.0, min_sample = 1e-3;
  // A warm-up run at least this long is the only sample (the backend sends a multiple of the
  // kernel's best so far: a config that much slower is timed by one run).
  double single_above = INFINITY;

  // The request's "timing" object; absent fields keep their defaults.
  static SampleTiming from_json(const nlohmann::json& timing) {
    SampleTiming t;
    t.min_repeats = timing.value("min_repeats", t.min_repeats);
    t.max_repeats = timing.value("max_repeats", t.max_repeats);
    t.target_cv = timing.value("target_cv", t.target_cv);
    t.budget = timing.value("budget", t.budget);
    t.min_sample = timing.value("min_sample", t.min_sample);
    t.single_above = timing.value("single_above", t.single_above);
    return t;
  }
};

inline double median_of(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const std::size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

inline double robust_cv(const std::vector<double>& xs) {
  const double median = median_of(xs);
  std::vector<double> deviations;
  for (double x : xs) deviations.push_back(std::fabs(x - median));
  return median > 0 ? 1.4826 * median_of(deviations) / median : 0.0;
}

// Seconds per call of `run`, one entry per sample; `warm_up_seconds` is the warm-up run's time.
template <typename Run>
std::vector<double> time_samples(Run&& run, double warm_up_seconds, const SampleTiming& timing) {
  using Clock = std::chrono::steady_clock;
  const auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  if (warm_up_seconds >= timing.budget) return {warm_up_seconds};
  const auto start = Clock::now();
  if (warm_up_seconds >= timing.single_above) {
    run();
    const double warm = since(start);
    if (warm >= timing.single_above) return {warm};
  }
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
    if (static_cast<int>(samples.size()) >= timing.min_repeats && robust_cv(samples) <= timing.target_cv) break;
    if (spent >= timing.budget && (samples.size() >= 3 || spent >= 3 * timing.budget)) break;
  }
  return samples;
}

}  // namespace perftune
