#pragma once
// Timing that a disturbed machine does not spoil. On this project's machines (2-vCPU KVM guests)
// a multi-threaded kernel at times runs at its one-thread speed: every thread works its share,
// each at half speed, with no steal time showing, for a fraction of a second, for seconds, or for
// the life of one worker process while the next one runs at full speed; so a 2-thread
// measurement lands at 1x or 2x its true time at random. A probe detects it: a fixed parallel
// kernel timed before and after the kernel, as a ratio of its one-thread time (near 1 / threads
// on a quiet machine, 1 when disturbed). A timing whose probes read over `tolerance` /
// threads is taken again after a pause that doubles from 50 ms, up to `max_attempts` (4: 0.35 s
// of pauses); when every attempt was disturbed the fastest is kept and flagged, and the backend
// takes it again in a fresh worker (HalideBackend). A disturbance only slows a kernel, so the
// fastest attempt is the one nearest the truth. The probes bracket a timing but miss a spell that
// starts after the first and ends before the second: the samples then split, the fastest of them
// more than `tolerance` times faster than their median (one thread's noise moves a sample by a few
// percent; a spell doubles it), and that timing counts as disturbed too.
#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/timing/sample_timer.h"

namespace perftune {

struct ParallelGuard {
  int threads = 1;
  int max_attempts = 4;     // 1 = time once, still reporting the probes' ratio
  double tolerance = 1.5;   // quiet: ratio <= tolerance / threads (0.75 for 2 threads), median <= tolerance x fastest

  bool disturbed(double ratio) const { return threads > 1 && ratio > tolerance / threads; }
  // The median was taken at a slower speed than the kernel ran at in its fastest sample.
  bool split(const std::vector<double>& samples) const {
    return threads > 1 && samples.size() >= 3 && median_of(samples) > tolerance * *std::min_element(samples.begin(), samples.end());
  }
  // The pause before attempt `attempt` (from 2): 50 ms, doubling.
  static double pause_seconds(int attempt) { return 0.05 * static_cast<double>(1L << std::clamp(attempt - 2, 0, 20)); }
  static void pause(int attempt) { std::this_thread::sleep_for(std::chrono::duration<double>(pause_seconds(attempt))); }
};

struct GuardedSamples {
  std::vector<double> samples;  // the kept attempt's
  int attempts = 0;
  double ratio = 0;             // the kept attempt's worse probe ratio
  bool disturbed = false;       // every attempt was
};

// probe(): the probe's ratio now. time(attempt): one timing's samples (attempt from 1). pause(attempt):
// called before each retry. first_before: the probe's ratio taken before work that time(1) may
// report began earlier (the runner's warm-up, the only sample of a kernel slower than the timing
// budget), so the first attempt is bracketed from there; absent, probe() is read just before time(1).
template <typename Probe, typename Time, typename Pause>
GuardedSamples guarded_samples(const ParallelGuard& guard, Probe&& probe, Time&& time, Pause&& pause,
                               std::optional<double> first_before = std::nullopt) {
  GuardedSamples kept;
  for (int attempt = 1; attempt <= std::max(1, guard.max_attempts); ++attempt) {
    if (attempt > 1) pause(attempt);
    const double before = attempt == 1 && first_before ? *first_before : probe();
    std::vector<double> samples = time(attempt);
    const double ratio = std::max(before, probe());
    const bool disturbed = guard.disturbed(ratio) || guard.split(samples);
    if (kept.attempts == 0 || !disturbed || median_of(samples) < median_of(kept.samples))
      kept = {std::move(samples), attempt, ratio, disturbed};
    kept.attempts = attempt;
    if (!disturbed) break;
  }
  return kept;
}

// A runner's reply to a guarded timing, as HalideBackend reads it: "repeats", "attempts",
// "parallel_ratio", and "disturbed": true when every attempt was.
inline void write_guarded(nlohmann::json& reply, const GuardedSamples& kept) {
  reply["repeats"] = kept.samples;
  reply["attempts"] = kept.attempts;
  reply["parallel_ratio"] = kept.ratio;
  if (kept.disturbed) reply["disturbed"] = true;
}

}  // namespace perftune
