// The runners' timing loop: a config is recorded by what it costs once warm, not by its first
// call, which pays page faults and cold caches that later calls do not.
#include "hardware/timing/sample_timer.h"

#include <chrono>
#include <thread>

#include "test_support.h"

namespace perftune {
namespace {

// A kernel whose every timed call takes `seconds`; counts its calls.
struct SleepingKernel {
  double seconds;
  int calls = 0;
  void operator()() {
    ++calls;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
};

SampleTiming timing_with_single_above(double single_above) {
  SampleTiming timing;
  timing.min_repeats = 3;
  timing.target_cv = 0.5;
  timing.budget = 1.0;
  timing.single_above = single_above;
  return timing;
}

TEST_CASE("a cold warm-up above single_above is not the sample of a config that runs fast once warm", "[timing]") {
  // The warm-up took 500 ms (first-touch page faults, say), warm calls take 1 ms: the config runs
  // 50x under single_above once warm and must be recorded by its warm calls. The margins are
  // wide because a 1 ms sleep overshoots by several ms on a loaded machine (CI runs two tests
  // at once), and a 3 ms threshold once read that as a slow config.
  SleepingKernel kernel{0.001};
  const auto samples = time_samples(kernel, 0.5, timing_with_single_above(0.05));
  REQUIRE(samples.size() >= 3);
  CHECK(median_of(samples) < 0.05);
}

TEST_CASE("a config still slow when warm is timed by one warm run", "[timing]") {
  SleepingKernel kernel{0.01};
  const auto samples = time_samples(kernel, 0.05, timing_with_single_above(0.003));
  REQUIRE(samples.size() == 1);
  CHECK(kernel.calls == 1);
  CHECK(samples[0] >= 0.009);
  CHECK(samples[0] < 0.05);  // its own warm time, not the warm-up's
}

TEST_CASE("a warm-up over the budget is the only sample: the slowest configs run once", "[timing]") {
  SleepingKernel kernel{0.01};
  const auto samples = time_samples(kernel, 2.0, timing_with_single_above(0.003));
  REQUIRE(samples.size() == 1);
  CHECK(samples[0] == 2.0);
  CHECK(kernel.calls == 0);
}

}  // namespace
}  // namespace perftune
