#include "autotuner/best_confirmation.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "search/toy_cost_model.h"

namespace perftune {
namespace {

MeasureResult ok(double seconds) { return MeasureResult::from_repeats({seconds}, 1.0); }
MeasureResult crash() { return MeasureResult::failure(MeasureStatus::kRuntimeError, "killed by signal 11", 1.0); }

// Re-measurements come from a script: the j-th call answers script[j] for every config asked.
struct ScriptedRemeasure {
  std::vector<MeasureResult> script;
  std::vector<std::vector<std::size_t>> calls;
  std::vector<MeasureResult> operator()(const std::vector<std::size_t>& which) {
    calls.push_back(which);
    return std::vector<MeasureResult>(which.size(), script.at(calls.size() - 1));
  }
};

const Config kTarget{{8, 8, 8}};
const Config kNeighbour{{8, 8, 16}};  // one knob away from kTarget
const Config kFar{{1, 1, 1}};

TEST_CASE("a would-be best is re-measured only when nothing vouches for it") {
  const SearchSpace space = testing::tile_space(6);
  const Kernel kernel = testing::toy_kernel();
  testing::ToyCostModel model(kTarget);  // predicts 1 ms at kTarget
  History history;
  history.add(kNeighbour, ok(1.3e-3));
  const auto [measured, use_model, neighbour_in_history, suspicious] = GENERATE(table<double, bool, bool, bool>({
      {1.0e-3, false, true, false},   // the neighbour vouches (1.3x)
      {1.0e-5, false, true, true},    // 130x faster than its neighbour
      {2.0e-4, false, true, true},    // 6.5x: beyond kNeighbourSuspicionFactor
      {1.0e-3, false, false, true},   // no model, no neighbour: unvouched
      {1.0e-3, true, false, false},   // the model vouches
      {5.0e-5, true, false, true},    // 20x faster than predicted: beyond kModelSuspicionFactor
      {1.0e-5, true, true, true},     // both object
  }));
  CAPTURE(measured, use_model, neighbour_in_history);
  const History empty;
  const ConfirmationEvidence evidence{kernel, space, use_model ? &model : nullptr, neighbour_in_history ? history : empty};
  const std::vector<Config> configs{kTarget};
  CHECK(is_suspicious(evidence, configs, {ok(measured)}, 0) == suspicious);
}

TEST_CASE("a batch-mate one knob away vouches like a measured neighbour") {
  const SearchSpace space = testing::tile_space(6);
  const Kernel kernel = testing::toy_kernel();
  const History history;
  const ConfirmationEvidence evidence{kernel, space, nullptr, history};
  const std::vector<Config> configs{kTarget, kNeighbour, kFar};
  CHECK_FALSE(is_suspicious(evidence, configs, {ok(1.0e-3), ok(1.2e-3), ok(9.0)}, 0));
  CHECK(is_suspicious(evidence, configs, {ok(1.0e-3), crash(), ok(9.0)}, 0));  // a failure vouches for nothing
}

TEST_CASE("a suspicious best is replaced by the median of three re-measurements") {
  const SearchSpace space = testing::tile_space(6);
  const Kernel kernel = testing::toy_kernel();
  History history;
  history.add(kNeighbour, ok(1.3e-3));
  const ConfirmationEvidence evidence{kernel, space, nullptr, history};
  const auto [again, expect_ok, expect_seconds] = GENERATE(table<std::vector<double>, bool, double>({
      {{1e-3, 1e-3, 1e-3}, true, 1e-3},
      {{1e-5, 1e-3, 1e-3}, true, 1e-3},  // one more fault is outvoted
      {{1e-5, 1e-5, 1e-3}, true, 1e-5},  // two are not: the residual risk (~3p^2)
      {{1e-3, -1, 1e-3}, true, 1e-3},    // -1: a crash, ranked slowest
      {{-1, 1e-3, -1}, false, 0.0},      // mostly failing: recorded as a failure
  }));
  CAPTURE(again);
  ScriptedRemeasure remeasure;
  for (double seconds : again) remeasure.script.push_back(seconds < 0 ? crash() : ok(seconds));
  const std::vector<Config> configs{kTarget};
  std::vector<MeasureResult> outcomes{ok(1e-5)};  // 130x faster than its neighbour
  const std::size_t extra = confirm_new_bests(evidence, configs, outcomes, 1.3e-3, std::ref(remeasure));
  CHECK(extra == kConfirmationRepeats);
  REQUIRE(outcomes[0].ok() == expect_ok);
  if (expect_ok) {
    CHECK(outcomes[0].seconds == expect_seconds);
    CHECK_THAT(outcomes[0].message, Catch::Contains("set aside as suspicious"));
  } else {
    CHECK(outcomes[0].status == MeasureStatus::kRuntimeError);
    CHECK_THAT(outcomes[0].message, Catch::Contains("unstable runtime"));
  }
}

TEST_CASE("rejecting a false best lets the next would-be best of the batch be checked") {
  const SearchSpace space = testing::tile_space(6);
  const Kernel kernel = testing::toy_kernel();
  History history;
  history.add(Config{{8, 8, 32}}, ok(1.0e-3));  // vouches for kNeighbour = {8, 8, 16} only
  const ConfirmationEvidence evidence{kernel, space, nullptr, history};
  // kFar claims 1e-6 s (no neighbour: suspicious); its re-measurements say 2 ms. kNeighbour's
  // 0.9 ms was hidden behind it and is the real new best, vouched for by {8, 8, 32}.
  const std::vector<Config> configs{kFar, kNeighbour, Config{{2, 2, 2}}};
  std::vector<MeasureResult> outcomes{ok(1e-6), ok(0.9e-3), ok(5e-3)};
  ScriptedRemeasure remeasure{{ok(2e-3), ok(2e-3), ok(2e-3)}};
  const std::size_t extra = confirm_new_bests(evidence, configs, outcomes, 1.0e-3, std::ref(remeasure));
  CHECK(extra == 3);
  REQUIRE(remeasure.calls.size() == 3);
  CHECK(remeasure.calls[0] == std::vector<std::size_t>{0});
  CHECK(outcomes[0].seconds == 2e-3);
  CHECK(outcomes[1].seconds == 0.9e-3);  // accepted on one measurement
  CHECK(outcomes[2].seconds == 5e-3);    // never a would-be best: untouched
}

TEST_CASE("a vouched-for new best within the close margin of the best so far is settled by its median") {
  const SearchSpace space = testing::tile_space(6);
  const Kernel kernel = testing::toy_kernel();
  History history;
  history.add(kNeighbour, ok(1.0e-3));  // the best so far; vouches for kTarget
  const ConfirmationEvidence evidence{kernel, space, nullptr, history};
  const auto [first, policy, remeasured] = GENERATE(table<double, ConfirmationPolicy, bool>({
      {0.95e-3, ConfirmationPolicy{true, 0.1}, true},    // 5% faster: a near-tie
      {0.85e-3, ConfirmationPolicy{true, 0.1}, false},   // 15% faster: beyond the margin
      {0.95e-3, ConfirmationPolicy{true, 0.0}, false},   // margin off
      {0.95e-3, ConfirmationPolicy{false, 0.1}, true},   // close without the suspicion check
  }));
  CAPTURE(first, policy.suspicious, policy.close_margin);
  const std::vector<Config> configs{kTarget};
  std::vector<MeasureResult> outcomes{ok(first)};
  ScriptedRemeasure remeasure{{ok(1.04e-3), ok(1.02e-3), ok(0.9e-3)}};  // in truth slower than the best
  const std::size_t extra = confirm_new_bests(evidence, configs, outcomes, 1.0e-3, std::ref(remeasure), policy);
  CHECK(extra == (remeasured ? kConfirmationRepeats : 0));
  CHECK(outcomes[0].seconds == (remeasured ? 1.02e-3 : first));
  if (remeasured) CHECK_THAT(outcomes[0].message, Catch::Contains("within 10% of the best so far"));
}

TEST_CASE("without the suspicion check an unvouched best stands; the first best of a run is never close") {
  const SearchSpace space = testing::tile_space(6);
  const Kernel kernel = testing::toy_kernel();
  const History history;
  const ConfirmationEvidence evidence{kernel, space, nullptr, history};
  const std::vector<Config> configs{kFar};
  std::vector<MeasureResult> outcomes{ok(1e-6)};  // nothing vouches for it
  ScriptedRemeasure remeasure;
  CHECK(confirm_new_bests(evidence, configs, outcomes, INFINITY, std::ref(remeasure), {false, 0.1}) == 0);
  CHECK(outcomes[0].seconds == 1e-6);
}

TEST_CASE("results that would not be a new best are never re-measured") {
  const SearchSpace space = testing::tile_space(6);
  const Kernel kernel = testing::toy_kernel();
  const History history;
  const ConfirmationEvidence evidence{kernel, space, nullptr, history};
  const std::vector<Config> configs{kTarget, kFar};
  std::vector<MeasureResult> outcomes{ok(2e-3), crash()};
  ScriptedRemeasure remeasure;
  CHECK(confirm_new_bests(evidence, configs, outcomes, 1e-3, std::ref(remeasure)) == 0);
  CHECK(remeasure.calls.empty());
}

}  // namespace
}  // namespace perftune
