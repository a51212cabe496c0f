#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "experiments/scoring/speedup_curves.h"

using namespace perftune;

namespace {

RecordedValues values_1_to_10() {
  RecordedValues values;
  for (int i = 1; i <= 10; ++i) values.ok_sorted.push_back(i);
  return values;
}

}  // namespace

TEST_CASE("best_at follows the curve, keeps a short run's last best and charges a run without a runtime") {
  const RecordedValues values = values_1_to_10();
  const RunCurve run{0, 0, 1, {std::nullopt, 7.0, 3.0}, {1, 2, 3}};
  const auto [b, expected] = GENERATE(table<std::size_t, double>({{1, 10.0}, {2, 7.0}, {3, 3.0}, {50, 3.0}}));
  CAPTURE(b);
  REQUIRE(best_at(run, values, b) == expected);
}

TEST_CASE("quantile interpolates linearly between order statistics") {
  const auto [q, expected] = GENERATE(table<double, double>({{0.0, 1.0}, {0.25, 1.75}, {0.5, 2.5}, {0.75, 3.25}, {1.0, 4.0}}));
  CAPTURE(q);
  REQUIRE(quantile({4.0, 1.0, 3.0, 2.0}, q) == Approx(expected));
  REQUIRE_THROWS(quantile({}, 0.5));
}

TEST_CASE("a strategy that finds the optimum at once scores 1; exact random runs score about 0") {
  const RecordedValues values = values_1_to_10();
  SpaceBaseline space{"toy", "k", "dev", values, 5.0};
  std::vector<RunCurve> runs;
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    RunCurve oracle{0, 0, seed, {}, {}};
    for (int i = 0; i < 10; ++i) {
      oracle.best_after.push_back(1.0);
      oracle.hardware_after.push_back(i + 1.0);
    }
    runs.push_back(oracle);
  }
  // Every permutation's prefix minima averaged exactly = f_random; use all 10 rotations of a
  // fixed order as the "random" runs: each value is first exactly once, so b = 1 is exact.
  for (std::uint64_t r = 0; r < 10; ++r) {
    RunCurve rotation{0, 1, r, {}, {}};
    double best = INFINITY;
    for (int i = 0; i < 10; ++i) {
      best = std::min(best, values.ok_sorted[(r + i) % 10]);
      rotation.best_after.push_back(best);
    }
    runs.push_back(rotation);
  }
  const auto summary = summarize_curves({space}, {"oracle", "rotation"}, runs, 10, {1, 5, 10, 200});
  const auto& oracle = summary["strategies"]["oracle"];
  REQUIRE(oracle["score"].get<double>() == Approx(1.0));  // b = 10 is excluded (f_random = f_opt there)
  REQUIRE(oracle["speedup_at"]["1"].get<double>() == Approx(5.0));  // default 5 s / best 1 s
  REQUIRE_FALSE(oracle["speedup_at"].contains("200"));            // beyond the budget
  const auto& rotation_space = summary["spaces"][0]["strategies"]["rotation"];
  REQUIRE(rotation_space["score"][0].get<double>() == Approx(0.0).margin(1e-12));
  REQUIRE(rotation_space["best_median"][0].get<double>() == Approx(5.5));
  REQUIRE(summary["spaces"][0]["reference"] == "default");
  REQUIRE(summary["spaces"][0]["strategies"]["oracle"]["hardware_seconds_median"][9].get<double>() == Approx(10.0));

  SpaceBaseline no_default = space;
  no_default.default_seconds.reset();
  const auto median_summary = summarize_curves({no_default}, {"oracle", "rotation"}, runs, 10, {1});
  REQUIRE(median_summary["spaces"][0]["reference"] == "median");
  REQUIRE(median_summary["strategies"]["oracle"]["speedup_at"]["1"].get<double>() == Approx(5.5));

  REQUIRE_THROWS_AS(summarize_curves({space}, {"oracle", "rotation", "missing"}, runs, 10, {1}), std::invalid_argument);
}

TEST_CASE("a live space is scored against the random strategy's measured curve and the best any run found") {
  // Nothing recorded: the runner pools the runs' best-so-far runtimes and measures random search.
  SpaceBaseline space{"live", "k", "cpu", {}, 8.0, true, {}};
  const std::vector<RunCurve> runs = {{0, 0, 1, {8.0, 6.0, 4.0}, {}}, {0, 0, 2, {8.0, 8.0, 6.0}, {}},  // random
                                      {0, 1, 1, {8.0, 2.0, 2.0}, {}}, {0, 1, 2, {8.0, 4.0, 2.0}, {}}};
  for (const RunCurve& run : runs)
    for (const auto& best : run.best_after) space.values.ok_sorted.push_back(*best);
  std::sort(space.values.ok_sorted.begin(), space.values.ok_sorted.end());
  for (std::size_t b = 1; b <= 3; ++b) space.measured_random.push_back((best_at(runs[0], space.values, b) + best_at(runs[1], space.values, b)) / 2);
  const auto summary = summarize_curves({space}, {"random", "model"}, runs, 3, {2, 3});
  const auto& entry = summary["spaces"][0];
  REQUIRE(entry["live"] == true);
  REQUIRE(entry["random_baseline"] == "measured");
  REQUIRE(entry["optimum_seconds"] == 2.0);
  REQUIRE_FALSE(entry.contains("configs"));  // a pool of runs, not a recorded space
  // Random scores 0 against itself; the model: b = 2 -> (7 - 3) / (7 - 2), b = 3 -> (5 - 2) / (5 - 2).
  REQUIRE(summary["strategies"]["random"]["score"].get<double>() == Approx(0.0));
  REQUIRE(summary["strategies"]["model"]["score_at"]["2"].get<double>() == Approx(0.8));
  REQUIRE(summary["strategies"]["model"]["score_at"]["3"].get<double>() == Approx(1.0));
  REQUIRE(summary["strategies"]["model"]["speedup_at"]["3"].get<double>() == Approx(4.0));  // 8 s default / 2 s

  // Without a random strategy there is nothing to standardize against: P is undefined, not invented.
  space.measured_random.clear();
  const auto unscored = summarize_curves({space}, {"random", "model"}, runs, 3, {2, 3});
  REQUIRE(unscored["spaces"][0]["random_baseline"] == "none");
  REQUIRE(unscored["strategies"]["model"]["score"].is_null());
  REQUIRE(unscored["spaces"][0]["random_expected_best"][0].is_null());
}

TEST_CASE("the score's standard error is the spread of the runs' own scores over seeds") {
  // f_random(1) = 5.5 and f_opt = 1: a run at 1 s scores 1, a run at 3 s scores 2.5 / 4.5.
  const RecordedValues values = values_1_to_10();
  const SpaceBaseline space{"toy", "k", "dev", values, 5.0};
  const RunCurve fast{0, 0, 1, {1.0, 1.0}, {}}, slow{0, 0, 2, {3.0, 3.0}, {}};
  const auto summary = summarize_curves({space}, {"model"}, {fast, slow}, 2, {1});
  const auto& model = summary["strategies"]["model"];
  const double low = 2.5 / 4.5;
  REQUIRE(model["score"].get<double>() == Approx((1.0 + low) / 2));
  // Two runs: sample sd |1 - low| / sqrt(2), over sqrt(2) runs.
  REQUIRE(model["score_standard_error"].get<double>() == Approx((1.0 - low) / 2));
  REQUIRE(summary["spaces"][0]["strategies"]["model"]["mean_score_standard_error"].get<double>() == Approx((1.0 - low) / 2));

  // Two such spaces, each half of the score: the error shrinks by sqrt(2).
  SpaceBaseline twin = space;
  twin.name = "twin";
  RunCurve fast_twin = fast, slow_twin = slow;
  fast_twin.space = slow_twin.space = 1;
  const auto both = summarize_curves({space, twin}, {"model"}, {fast, slow, fast_twin, slow_twin}, 2, {1});
  REQUIRE(both["strategies"]["model"]["score_standard_error"].get<double>() == Approx((1.0 - low) / 2 / std::sqrt(2.0)));

  // Runs that agree leave no error; a single run leaves it unknown, not zero.
  const auto agreeing = summarize_curves({space}, {"model"}, {fast, RunCurve{0, 0, 3, {1.0, 1.0}, {}}}, 2, {1});
  REQUIRE(agreeing["strategies"]["model"]["score_standard_error"].get<double>() == Approx(0.0).margin(1e-12));
  const auto single = summarize_curves({space}, {"model"}, {fast}, 2, {1});
  REQUIRE(single["strategies"]["model"]["score_standard_error"].is_null());
}
