// The parallel guard: a timing taken while the machine could not run the kernel's threads side by
// side (the probe's ratio near 1 instead of 1/threads) is taken again, and never kept over a quiet one.
#include "hardware/timing/parallel_guard.h"

#include <deque>

#include "test_support.h"

namespace perftune {
namespace {

// Probe ratios read in turn, and the samples each attempt's timing returns; counts pauses.
struct ScriptedMachine {
  std::deque<double> ratios;
  std::deque<std::vector<double>> timings;
  int pauses = 0;

  GuardedSamples run(const ParallelGuard& guard, std::optional<double> first_before = std::nullopt) {
    return guarded_samples(
        guard,
        [this] {
          const double r = ratios.front();
          ratios.pop_front();
          return r;
        },
        [this](int) {
          std::vector<double> t = timings.front();
          timings.pop_front();
          return t;
        },
        [this](int) { ++pauses; }, first_before);
  }
};

TEST_CASE("a quiet first attempt is kept without a retry", "[timing][guard]") {
  ScriptedMachine machine{{0.51, 0.52}, {{1.0, 1.1, 1.0}}};
  const GuardedSamples kept = machine.run({2, 4, 1.5});
  CHECK(kept.attempts == 1);
  CHECK_FALSE(kept.disturbed);
  CHECK(kept.ratio == 0.52);
  CHECK(median_of(kept.samples) == 1.0);
  CHECK(machine.pauses == 0);
}

TEST_CASE("the first attempt is bracketed from a probe read before its warm-up", "[timing][guard]") {
  // A kernel slower than the timing budget is timed by its warm-up, which ran before the
  // guard's first probe: a disturbance then is caught by the ratio read before the warm-up.
  ScriptedMachine disturbed_warm_up{{0.52, 0.5, 0.51}, {{2.0}, {1.0}}};
  const GuardedSamples kept = disturbed_warm_up.run({2, 4, 1.5}, 0.99);
  CHECK(kept.attempts == 2);
  CHECK(kept.samples == std::vector<double>{1.0});
  CHECK(disturbed_warm_up.ratios.empty());  // the first attempt read one probe, after its timing
  ScriptedMachine quiet{{0.52}, {{1.0}}};
  CHECK(quiet.run({2, 4, 1.5}, 0.5).attempts == 1);
}

TEST_CASE("a timing disturbed before or after is taken again, and the quiet one is kept even when slower", "[timing][guard]") {
  // The first attempt's probe after it read 0.98 (the threads ran at one-thread speed); its
  // samples look fast by chance but are not trusted over a quiet attempt.
  ScriptedMachine machine{{0.5, 0.98, 0.99, 0.5, 0.52, 0.53}, {{0.9}, {2.0}, {1.0}}};
  const GuardedSamples kept = machine.run({2, 4, 1.5});
  CHECK(kept.attempts == 3);
  CHECK_FALSE(kept.disturbed);
  CHECK(kept.samples == std::vector<double>{1.0});
  CHECK(kept.ratio == 0.53);
  CHECK(machine.pauses == 2);
}

TEST_CASE("when every attempt is disturbed the fastest is kept and flagged", "[timing][guard]") {
  ScriptedMachine machine{{0.9, 1.0, 0.95, 0.97, 1.0, 1.0}, {{2.0, 2.1}, {1.5, 1.6}, {1.9}}};
  const GuardedSamples kept = machine.run({2, 3, 1.5});
  CHECK(kept.attempts == 3);
  CHECK(kept.disturbed);
  CHECK(kept.samples == std::vector<double>{1.5, 1.6});
  CHECK(kept.ratio == 0.97);
}

TEST_CASE("a timing whose samples split is taken again though its probes read quiet", "[timing][guard]") {
  // A spell between the probes: most samples at one-thread speed, one at full speed.
  ScriptedMachine machine{{0.5, 0.52, 0.51, 0.5}, {{1.0, 1.9, 2.0, 2.0, 1.95}, {1.0, 1.02, 0.99}}};
  const GuardedSamples kept = machine.run({2, 4, 1.5});
  CHECK(kept.attempts == 2);
  CHECK_FALSE(kept.disturbed);
  CHECK(median_of(kept.samples) == 1.0);
  const ParallelGuard two{2, 4, 1.5}, one{1, 4, 1.5};
  CHECK_FALSE(two.split({1.0, 1.1, 1.2, 1.05}));  // noise
  CHECK_FALSE(two.split({1.0, 2.0}));             // too few samples to have a median apart from them
  CHECK_FALSE(one.split({1.0, 2.0, 2.0}));        // one thread cannot lose a second one
}

TEST_CASE("the tolerance scales with the thread count, and one thread is never disturbed", "[timing][guard]") {
  const ParallelGuard two{2, 4, 1.5}, four{4, 4, 1.5}, one{1, 4, 1.5};
  CHECK(two.disturbed(0.8));
  CHECK_FALSE(two.disturbed(0.65));  // a quiet 2-thread probe reads 0.5-0.65 here
  CHECK(four.disturbed(0.5));
  CHECK_FALSE(four.disturbed(0.3));
  CHECK_FALSE(one.disturbed(1.0));
}

TEST_CASE("the pauses between attempts double from 50 ms", "[timing][guard]") {
  CHECK(ParallelGuard::pause_seconds(2) == 0.05);
  CHECK(ParallelGuard::pause_seconds(3) == 0.1);
  double total = 0;
  for (int attempt = 2; attempt <= ParallelGuard{}.max_attempts; ++attempt) total += ParallelGuard::pause_seconds(attempt);
  CHECK(total == Approx(0.35));
}

}  // namespace
}  // namespace perftune
