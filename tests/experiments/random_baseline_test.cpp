#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "experiments/scoring/random_baseline.h"

using namespace perftune;

namespace {

// E[best of b draws] by enumerating every b-subset of the N recorded configs (failed ones as
// "no runtime", charged the slowest valid runtime when a subset holds nothing else).
double brute_force(const RecordedValues& values, std::size_t b) {
  std::vector<double> all = values.ok_sorted;
  all.insert(all.end(), values.failed, INFINITY);
  const std::size_t n = all.size();
  std::vector<bool> pick(n, false);
  std::fill(pick.begin(), pick.begin() + static_cast<long>(b), true);
  double sum = 0.0;
  std::size_t subsets = 0;
  do {
    double best = INFINITY;
    for (std::size_t i = 0; i < n; ++i)
      if (pick[i]) best = std::min(best, all[i]);
    sum += std::isfinite(best) ? best : values.no_runtime_value();
    ++subsets;
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return sum / static_cast<double>(subsets);
}

RecordedValues make_values(std::vector<double> ok, std::size_t failed) {
  std::sort(ok.begin(), ok.end());
  return RecordedValues{ok, failed};
}

}  // namespace

TEST_CASE("the exact random baseline equals enumeration over every subset of small spaces") {
  const auto [ok, failed] = GENERATE(table<std::vector<double>, std::size_t>({
      {{1.0}, 0},
      {{3.0, 1.0, 2.0}, 0},
      {{5.0, 1.0, 4.0, 2.0, 3.0}, 0},
      {{2.0, 2.0, 7.0, 1.5, 9.0, 3.0}, 0},  // ties
      {{4.0, 1.0, 3.0}, 2},                 // failures in the draw
      {{10.0, 20.0}, 5},
      {{0.3, 0.1, 0.2, 0.5, 0.4, 0.9, 0.7, 0.8, 0.6, 1.1}, 3},
  }));
  const RecordedValues values = make_values(ok, failed);
  for (std::size_t b = 1; b <= values.size(); ++b) {
    CAPTURE(ok, failed, b);
    // Relative 1e-12: the running-ratio sum and the subset average differ only by rounding.
    REQUIRE(expected_random_best(values, b) == Approx(brute_force(values, b)).epsilon(1e-12));
  }
}

TEST_CASE("the random baseline's edges: one draw is the mean, all draws the optimum, big spaces stay finite") {
  const RecordedValues values = make_values({4.0, 1.0, 3.0, 2.0}, 0);
  REQUIRE(expected_random_best(values, 1) == Approx(2.5));
  REQUIRE(expected_random_best(values, 4) == Approx(1.0));
  REQUIRE(expected_random_best(values, 99) == Approx(1.0));  // clamped to N
  REQUIRE_THROWS_AS(expected_random_best(values, 0), std::invalid_argument);

  // 18k configs like the GEMM spaces: C(N, b) overflows doubles, the running ratios do not.
  std::vector<double> big(18000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = 1.0 + static_cast<double>(i);
  const RecordedValues large = make_values(big, 500);
  double previous = INFINITY;
  for (std::size_t b : {1, 10, 100, 200, 5000}) {
    const double e = expected_random_best(large, b);
    CAPTURE(b, e);
    REQUIRE(std::isfinite(e));
    REQUIRE(e < previous);  // more draws, better expected best
    previous = e;
  }
  // Without failures, E[min of b uniform ranks of N] = (N+1)/(b+1) exactly.
  const RecordedValues ranks = make_values(big, 0);
  REQUIRE(expected_random_best(ranks, 10) == Approx(18001.0 / 11.0).epsilon(1e-9));
}

TEST_CASE("P(b) is 0 for random search in expectation and 1 at the optimum") {
  std::vector<double> ok;
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> runtime(0.0, 0.5);
  for (int i = 0; i < 60; ++i) ok.push_back(runtime(rng));
  const RecordedValues values = make_values(ok, 15);
  const std::size_t n = values.size();
  for (std::size_t b : {1, 3, 10, 30}) {
    CAPTURE(b);
    const double f_random = expected_random_best(values, b);
    REQUIRE(standardized_score(f_random, values.optimum(), values.optimum()) == Approx(1.0));
    REQUIRE(standardized_score(f_random, f_random, values.optimum()) == Approx(0.0).margin(1e-12));

    // Simulated random search: b draws without replacement from all N configs.
    std::vector<std::size_t> order(n);
    constexpr int kRuns = 20000;
    double sum = 0.0, sum_sq = 0.0;
    for (int run = 0; run < kRuns; ++run) {
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      double best = INFINITY;
      for (std::size_t i = 0; i < b; ++i)
        if (order[i] < values.ok_sorted.size()) best = std::min(best, values.ok_sorted[order[i]]);
      const double value = std::isfinite(best) ? best : values.no_runtime_value();
      sum += value;
      sum_sq += value * value;
    }
    const double mean = sum / kRuns;
    const double standard_error = std::sqrt((sum_sq / kRuns - mean * mean) / kRuns);
    const double p = *standardized_score(f_random, mean, values.optimum());
    // Five standard errors of the simulated mean, in P's units: a false failure has odds ~1e-6.
    REQUIRE(std::abs(p) <= 5.0 * standard_error / (f_random - values.optimum()));
  }
}

TEST_CASE("P(b) is undefined where random search is already optimal") {
  REQUIRE_FALSE(standardized_score(1.0, 1.0, 1.0).has_value());
  REQUIRE(standardized_score(2.0, 3.0, 1.0) == Approx(-1.0));  // worse than random is negative
}

TEST_CASE("recorded values keep the first recording of a config and count failures") {
  Config a{{1}}, b{{2}}, c{{3}};
  MeasuredKernel kernel;
  kernel.measurements = {{a, MeasureResult::from_repeats({2.0}, 0.0)},
                         {b, MeasureResult::failure(MeasureStatus::kCompileError, "no")},
                         {a, MeasureResult::from_repeats({0.5}, 0.0)},  // a duplicate: replay serves the first
                         {c, MeasureResult::from_repeats({1.0}, 0.0)}};
  const RecordedValues values = recorded_values(kernel);
  REQUIRE(values.ok_sorted == std::vector<double>{1.0, 2.0});
  REQUIRE(values.failed == 1);
  REQUIRE(values.median() == Approx(1.5));
  MeasuredKernel broken;
  broken.measurements = {{a, MeasureResult::failure(MeasureStatus::kCompileError, "no")}};
  REQUIRE_THROWS_AS(recorded_values(broken), std::invalid_argument);
}
