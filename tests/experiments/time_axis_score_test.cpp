#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "experiments/scoring/time_axis_score.h"

using namespace perftune;

namespace {

// A small recorded space: four valid runtimes and one failed config, every config costing 1 s.
RecordedValues small_space() {
  RecordedValues values{{1.0, 2.0, 3.0, 4.0}, 1};
  values.mean_cost_seconds = 1.0;
  return values;
}

// Random search by brute force: one run per order of drawing the five configs (all 120), each
// measurement completing one second after the last, no time of its own.
std::vector<RunCurve> every_draw_order(const RecordedValues& values) {
  std::vector<double> runtimes = values.ok_sorted;
  runtimes.insert(runtimes.end(), values.failed, NAN);  // failed
  std::vector<std::size_t> order(runtimes.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<RunCurve> runs;
  do {
    RunCurve run{0, 0, runs.size(), {}, {}, {}};
    std::optional<double> best;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const double v = runtimes[order[i]];
      if (!std::isnan(v)) best = best ? std::min(*best, v) : v;
      run.best_after.push_back(best);
      run.hardware_after.push_back(static_cast<double>(i + 1));
      run.search_after.push_back(0.0);
    }
    runs.push_back(std::move(run));
  } while (std::next_permutation(order.begin(), order.end()));
  return runs;
}

double brute_force_best_at(const std::vector<RunCurve>& runs, const RecordedValues& values, double seconds) {
  double sum = 0.0;
  for (const RunCurve& run : runs) sum += run_best_at_time(run, values, seconds);
  return sum / static_cast<double>(runs.size());
}

std::vector<const RunCurve*> pointers(const std::vector<RunCurve>& runs) {
  std::vector<const RunCurve*> out;
  for (const RunCurve& run : runs) out.push_back(&run);
  return out;
}

}  // namespace

TEST_CASE("the time-axis random baseline is random search's mean over every draw order") {
  const RecordedValues values = small_space();
  const std::vector<RunCurve> runs = every_draw_order(values);
  REQUIRE(runs.size() == 120);
  for (const double t : {0.0, 0.5, 1.0, 1.7, 2.0, 3.2, 4.0, 4.99, 5.0, 9.0}) {
    CAPTURE(t);
    REQUIRE(random_best_at_time(values, 1.0, t) == Approx(brute_force_best_at(runs, values, t)).epsilon(1e-12));
  }
}

TEST_CASE("the window's ends are the fewest draws whose brute-force mean best reaches the target") {
  const RecordedValues values = small_space();
  const std::vector<RunCurve> runs = every_draw_order(values);
  const double optimum = 1.0, median = 2.5;
  for (const TimeWindow window : {TimeWindow{0.5, 0.96}, TimeWindow{0.01, 0.95}, TimeWindow{0.2, 0.6}}) {
    CAPTURE(window.label());
    const std::optional<TimeWindowSpan> span = time_window_span(values, window);
    REQUIRE(span);
    auto fewest = [&](double p) {
      const double target = optimum + (median - optimum) * (1 - p);
      std::size_t b = 1;
      while (brute_force_best_at(runs, values, static_cast<double>(b)) > target + 1e-12) ++b;
      return b;
    };
    CHECK(span->start_draws == fewest(window.start));
    CHECK(span->end_draws == fewest(window.end));
    CHECK(span->start_seconds == Approx(static_cast<double>(span->start_draws)));
    CHECK(span->end_seconds == Approx(static_cast<double>(span->end_draws)));
  }
}

TEST_CASE("random search's own runs score 0 on the time axis; an oracle scores 1 until its search time counts") {
  const RecordedValues values = small_space();
  const std::vector<RunCurve> runs = every_draw_order(values);
  const TimeWindowSpan span = *time_window_span(values, {0.01, 0.95});
  const std::optional<TimeAxisScore> random = time_axis_score(values, span, pointers(runs));
  REQUIRE(random);
  CHECK(random->score == Approx(0.0).margin(1e-12));
  CHECK(random->covered == Approx(1.0));  // every order draws the whole space
  for (const double p : random->curve)
    if (!std::isnan(p)) CHECK(p == Approx(0.0).margin(1e-12));

  // Finds the optimum with its first measurement.
  RunCurve oracle{0, 1, 1, {1.0, 1.0}, {1.0, 2.0}, {0.0, 0.0}};
  const std::optional<TimeAxisScore> fast = time_axis_score(values, span, {&oracle});
  REQUIRE(fast);
  CHECK(fast->score == Approx(1.0));
  CHECK(fast->covered == 0.0);  // it stopped after 2 s, before the window's end
  // The same measurements after 100 s of its own search: by the window's end it has found nothing.
  oracle.search_after = {100.0, 100.0};
  const std::optional<TimeAxisScore> slow = time_axis_score(values, span, {&oracle});
  REQUIRE(slow);
  CHECK(slow->score < 0.0);
}

TEST_CASE("time-axis scores join the summary per space and strategy; live spaces and costless recordings get none") {
  RecordedValues values = small_space();
  const std::vector<RunCurve> runs = every_draw_order(values);
  SpaceBaseline recorded{"s", "k", "d", values, {}, false, {}, {}};
  RecordedValues costless = values;
  costless.mean_cost_seconds = 0.0;
  SpaceBaseline free_space{"free", "k", "d2", costless, {}, false, {}, {}};
  std::vector<RunCurve> all = runs;
  for (RunCurve run : runs) {
    run.space = 1;
    all.push_back(std::move(run));
  }
  nlohmann::ordered_json tables = summarize_curves({recorded, free_space}, {"random"}, all, 5, {1, 5});
  add_time_axis_scores(tables, {recorded, free_space}, {"random"}, all, default_time_windows());
  const auto& space = tables["spaces"][0];
  REQUIRE(space["time_windows"].size() == 2);
  CHECK(space["time_windows"][0]["window"] == "0.5-0.96");
  CHECK(space["strategies"]["random"]["time_score"]["0.01-0.95"].get<double>() == Approx(0.0).margin(1e-12));
  CHECK(space["strategies"]["random"]["time_score_curve"]["0.01-0.95"].size() == kTimeGridPoints / kTimeCurveStride + 1);
  CHECK(tables["spaces"][1]["time_windows"].empty());
  CHECK(tables["spaces"][1]["strategies"]["random"]["time_score"]["0.5-0.96"].is_null());
  // The strategy's score is the mean over the spaces that have one.
  CHECK(tables["strategies"]["random"]["time_score"]["0.5-0.96"].get<double>() == Approx(0.0).margin(1e-12));
  CHECK(tables["strategies"]["random"]["time_score_standard_error"]["0.5-0.96"].is_number());
}
