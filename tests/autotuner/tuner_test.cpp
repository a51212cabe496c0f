#include "autotuner/tuner.h"
#include "autotuner/tuning_session.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include <catch2/catch.hpp>

#include "autotuner/manual_clock.h"
#include "autotuner/scripted_backend.h"
#include "ir/record_log.h"
#include "search/anchored_search.h"
#include "search/evolutionary_search.h"
#include "search/exhaustive_search.h"
#include "search/measured_annealing.h"
#include "search/measured_evolution.h"
#include "search/random_search.h"
#include "search/random_streams.h"
#include "search/simulated_annealing.h"
#include "search/small_strategies.h"
#include "search/toy_cost_model.h"
#include "surrogate/transfer/flat_prior.h"
#include "surrogate/transfer/target_residual.h"
#include "test_support.h"

namespace perftune {
namespace {

std::unique_ptr<Strategy> make(const std::string& name) { return testing::small_strategy(name); }

struct Setup {
  explicit Setup(Config target_config = Config{{64, 8, 32}}) : target(std::move(target_config)) {}
  Config target;
  SearchSpace space = testing::tile_space(8);  // 512 configs
  Kernel kernel = testing::toy_kernel();
  testing::ToyCostModel model{target};
  testing::ScriptedBackend backend{[this](const Config& c) { return testing::toy_seconds(c, target); }};
};

TEST_CASE("the tuner finds the rewarded config with every strategy and measures nothing twice") {
  const auto [name, with_model, budget] = GENERATE(table<std::string, bool, std::size_t>({
      {"annealing", true, 24},
      {"evolution", true, 24},
      {"exhaustive", true, 24},
      {"measured_annealing", false, 200},
      {"measured_evolution", false, 200},
      {"random", false, 512},  // random search finds it by covering the space
  }));
  const std::uint64_t seed = GENERATE(1u, 2u);
  CAPTURE(name, seed);
  Setup s(Config{{16, 128, 4}});
  auto strategy = make(name);
  TunerOptions options;
  options.max_measurements = budget;
  options.top_k = 8;
  options.seed = seed;
  Tuner tuner(s.backend, *strategy, with_model ? &s.model : nullptr, nullptr, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  REQUIRE(result.history.best());
  CHECK(result.history.entries()[*result.history.best()].config == s.target);
  CHECK(result.history.size() == budget);
  CHECK(s.backend.max_times_measured() == 1);
  CHECK(result.best_after.size() == budget);
  CHECK(result.best_after.back() == Approx(1e-3));
  for (std::size_t batch : s.backend.batches) CHECK(batch <= 8);
  if (with_model) CHECK(std::accumulate(s.model.updates.begin(), s.model.updates.end(), std::size_t{0}) == budget);
}

TEST_CASE("the tuner stops when the space is used up, never measuring a config twice") {
  Setup s(Config{{2, 1, 2}});
  s.space = testing::tile_space(2);  // 8 configs
  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution", "random", "measured_annealing");
  CAPTURE(name);
  auto strategy = make(name);
  TunerOptions options;
  options.max_measurements = 50;
  options.top_k = 3;
  Tuner tuner(s.backend, *strategy, &s.model, nullptr, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  CHECK(result.history.size() == 8);
  CHECK(result.stop == StopReason::kSpaceExhausted);
  CHECK(s.backend.max_times_measured() == 1);
  CHECK(s.backend.times_measured.size() == 8);
}

TEST_CASE("a failed measurement is logged with its status and skipped") {
  Setup s;
  s.backend.failing = {s.target, Config{{64, 8, 16}}};
  auto strategy = make("annealing");
  const std::string dir = scratch_dir("tuner_failed");
  RecordLog log(dir + "/records.jsonl");
  TunerOptions options;
  options.max_measurements = 24;
  options.top_k = 8;
  Tuner tuner(s.backend, *strategy, &s.model, &log, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  CHECK(result.history.size() == 24);  // the loop went on to the budget
  REQUIRE(result.history.find(s.target));
  CHECK(result.history.find(s.target)->status == MeasureStatus::kRuntimeError);
  CHECK(result.failed >= 1);
  REQUIRE(result.history.best());
  CHECK(result.history.entries()[*result.history.best()].config != s.target);
  CHECK(s.backend.max_times_measured() == 1);
  const LoadedLog loaded = RecordLog::load(log.path());
  REQUIRE(loaded.records.size() == 24);
  bool logged_failure = false;
  for (const Record& record : loaded.records)
    if (record.config == s.target) {
      logged_failure = true;
      CHECK(record.result.status == MeasureStatus::kRuntimeError);
      CHECK(record.result.message == "scripted crash");
      CHECK(record.device == "scripted:test");
    }
  CHECK(logged_failure);
}

TEST_CASE("a zero budget, an empty space and a strategy without its model are clear errors") {
  Setup s;
  auto strategy = make("measured_evolution");
  SECTION("budget 0") {
    Tuner tuner(s.backend, *strategy, nullptr, nullptr, TunerOptions{});
    CHECK_THROWS_WITH(tuner.run(s.kernel, s.space), Catch::Contains("budget is zero"));
  }
  SECTION("empty space") {
    const SearchSpace empty = testing::tile_space(4, [](const Config&) { return false; });
    TunerOptions options;
    options.max_measurements = 10;
    Tuner tuner(s.backend, *strategy, nullptr, nullptr, options);
    CHECK_THROWS_WITH(tuner.run(s.kernel, empty), Catch::Contains("space of kernel 'toy_matmul' is empty"));
  }
  SECTION("annealing without a model") {
    auto annealing = make("annealing");
    TunerOptions options;
    options.max_measurements = 10;
    Tuner tuner(s.backend, *annealing, nullptr, nullptr, options);
    CHECK_THROWS_WITH(tuner.run(s.kernel, s.space), Catch::Contains("needs") || Catch::Contains("has none"));
  }
  CHECK(s.backend.times_measured.empty());
}

TEST_CASE("the hardware-seconds budget and early stopping end a campaign") {
  Setup s;
  auto strategy = make("measured_evolution");
  SECTION("hardware seconds") {
    TunerOptions options;
    options.max_hardware_seconds = 10.0;  // the scripted backend charges 1 s per measurement
    options.top_k = 4;
    Tuner tuner(s.backend, *strategy, nullptr, nullptr, options);
    const TuneResult result = tuner.run(s.kernel, s.space);
    CHECK(result.stop == StopReason::kHardwareBudget);
    CHECK(result.history.size() == 12);
    CHECK(result.hardware_seconds == 12.0);
  }
  SECTION("early stopping") {
    s.backend = testing::ScriptedBackend([](const Config&) { return 1e-3; });  // flat: nothing ever improves
    TunerOptions options;
    options.max_measurements = 400;
    options.top_k = 5;
    options.early_stopping = 20;
    Tuner tuner(s.backend, *strategy, nullptr, nullptr, options);
    const TuneResult result = tuner.run(s.kernel, s.space);
    CHECK(result.stop == StopReason::kEarlyStopping);
    CHECK(result.history.size() == 25);  // the first measurement is a best, then 20 without a new one, in rounds of 5
  }
}

TEST_CASE("configs to measure first are measured in round 0, and the batch scales with the budget") {
  Setup s;
  auto strategy = make("annealing");
  TunerOptions options;
  options.max_measurements = 30;
  options.measure_first = {Config{{1, 1, 1}}};
  Tuner tuner(s.backend, *strategy, &s.model, nullptr, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  CHECK(result.history.entries().front().config == Config{{1, 1, 1}});
  CHECK(s.backend.batches.front() == 3);  // default_top_k(30) = 3
  CHECK(default_top_k(50) == 5);
  CHECK(default_top_k(100000) == 64);
  CHECK(default_top_k(3) == 1);
}

TEST_CASE("the configs measured first anchor the search: an anchored strategy's first batch lies near them") {
  Setup s(Config{{128, 128, 128}});
  AnchoredOptions anchoring;
  anchoring.depth = 1;
  AnchoredSearch strategy(make("evolution"), anchoring);
  TunerOptions options;
  options.max_measurements = 9;
  options.top_k = 9;
  options.epsilon = 0;
  const Config first{{1, 1, 1}};
  options.measure_first = {first};
  Tuner tuner(s.backend, strategy, &s.model, nullptr, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  REQUIRE(result.history.size() == 9);
  std::size_t near_first = 0;
  for (const auto& entry : result.history.entries()) near_first += testing::knobs_apart(entry.config, first) == 1 ? 1 : 0;
  CHECK(near_first == 4);  // half of the 8 proposals; the target, 3 knobs away, among the others
  CHECK(std::any_of(result.history.entries().begin(), result.history.entries().end(),
                    [&](const auto& entry) { return entry.config == s.target; }));
}

TEST_CASE("a ramped campaign measures 1, 2, 4, ... configs per round up to top_k") {
  Setup s;
  auto strategy = make("annealing");
  TunerOptions options;
  options.max_measurements = 30;
  options.top_k = 6;
  options.ramp_batches = true;
  Tuner tuner(s.backend, *strategy, &s.model, nullptr, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  CHECK(s.backend.batches == std::vector<std::size_t>{1, 2, 4, 6, 6, 6, 5});  // the last round: what the budget leaves
  CHECK(result.history.size() == 30);
  CHECK(result.rounds == 7);

  // The configs to measure first (default, heuristic) all go in round 0, then the ramp goes on.
  Setup first;
  options.max_measurements = 10;
  options.measure_first = {Config{{1, 1, 1}}, Config{{2, 2, 2}}, Config{{4, 4, 4}}};
  Tuner first_tuner(first.backend, *strategy, &first.model, nullptr, options);
  const TuneResult started = first_tuner.run(first.kernel, first.space);
  CHECK(first.backend.batches == std::vector<std::size_t>{3, 2, 4, 1});
  for (std::size_t i = 0; i < options.measure_first.size(); ++i) CHECK(started.history.entries()[i].config == options.measure_first[i]);
}

// A model whose posterior scores the candidates it is shown in reverse order, fitted or drawn: a
// Thompson batch policy then sends the worst-ranked proposals first.
class ReversingModel : public testing::ToyCostModel {
 public:
  using ToyCostModel::ToyCostModel;
  std::unique_ptr<PredictiveBelief> belief(const Kernel&, const SearchSpace&) override { return std::make_unique<Reversed>(*this); }
  std::vector<std::size_t> pools;
  std::vector<std::vector<Config>> shown;

 private:
  struct Scores : CandidateScores {
    std::size_t count = 0;
    std::vector<double> expected() const override {
      std::vector<double> scores;
      for (std::size_t c = 0; c < count; ++c) scores.push_back(-static_cast<double>(c));
      return scores;
    }
    std::vector<double> draw(Rng&) const override { return expected(); }
  };
  struct Reversed : PredictiveBelief {
    explicit Reversed(ReversingModel& model) : model(model) {}
    bool fitted() const override { return true; }
    std::vector<Measured> measured() const override { return {}; }
    std::unique_ptr<CandidateScores> at(std::span<const Config> candidates) override {
      model.pools.push_back(candidates.size());
      model.shown.emplace_back(candidates.begin(), candidates.end());
      auto scores = std::make_unique<Scores>();
      scores->count = candidates.size();
      return scores;
    }
    ReversingModel& model;
  };
};

TEST_CASE("the batch policy chooses each round's batch from the pool it asks for") {
  Setup s;
  ReversingModel model{s.target};
  auto strategy = make("exhaustive");
  TunerOptions options;
  options.max_measurements = 8;
  options.top_k = 4;
  options.epsilon = 0.0;
  options.batch_policy = {.batch = BatchChoice::kThompson, .batch_pool = 3};
  Tuner tuner(s.backend, *strategy, &model, nullptr, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  CHECK(model.pools == std::vector<std::size_t>{12, 12});
  REQUIRE(model.shown.size() == 2);
  for (std::size_t round = 0; round < 2; ++round)
    for (std::size_t i = 0; i < 4; ++i) CHECK(result.history.entries()[4 * round + i].config == model.shown[round][11 - i]);
}

TEST_CASE("epsilon-greedy sends a share of random configs") {
  Setup s;
  auto strategy = make("exhaustive");  // alone it would measure the model's top k, all near the target
  TunerOptions options;
  options.max_measurements = 64;
  options.top_k = 16;
  options.epsilon = 0.5;
  Tuner tuner(s.backend, *strategy, &s.model, nullptr, options);
  const TuneResult result = tuner.run(s.kernel, s.space);
  // Every config of the model's top 64 is within 4 factors of two of the target (there are more
  // than 64 such configs); about 32 random ones land farther with probability ~0.7 each.
  std::size_t far = 0;
  for (const Measurement& m : result.history.entries())
    if (testing::toy_seconds(m.config, s.target) > 1e-3 * std::pow(1.3, 4.5)) ++far;
  CHECK(far >= 10);
}

}  // namespace
}  // namespace perftune

namespace perftune {
namespace {

TEST_CASE("a resumed campaign matches logged configs by knob name, whatever order the log lists them in") {
  // Knobs deliberately not in alphabetical order (JSON objects sort their keys when parsed).
  const SearchSpace space({{"zeta", {1, 2, 4, 8}}, {"alpha", {1, 2, 4, 8}}, {"mid", {1, 2, 3}}});
  const Kernel kernel = testing::toy_kernel();
  const std::string path = scratch_dir("tuner_knob_order") + "/records.jsonl";
  auto seconds = [](const Config& c) { return 1e-3 * static_cast<double>(c.values[0] + 3 * c.values[1] + c.values[2]); };
  TunerOptions options;
  options.max_measurements = 12;
  options.top_k = 4;
  options.seed = 5;
  TuneResult first;
  {
    testing::ScriptedBackend backend(seconds);
    MeasuredEvolution strategy;
    RecordLog log(path);
    first = Tuner(backend, strategy, nullptr, &log, options).run(kernel, space);
  }
  const LoadedLog loaded = RecordLog::load(path);
  REQUIRE(loaded.records.size() == 12);
  CHECK(loaded.records[0].knob_names == std::vector<std::string>{"zeta", "alpha", "mid"});
  testing::ScriptedBackend backend(seconds);
  MeasuredEvolution strategy;
  const TuneResult again = Tuner(backend, strategy, nullptr, nullptr, options).run(kernel, space, loaded.records);
  CHECK(again.from_log == 12);
  CHECK(backend.times_measured.empty());
  CHECK(again.best_after == first.best_after);
}

// A strategy whose search costs time on `clock`: up to `steps` steps of `step_seconds` each,
// stopping at the round's deadline after the first, then random unmeasured proposals.
class SlowStrategy : public Strategy {
 public:
  SlowStrategy(testing::ManualClock& clock, std::size_t steps, double step_seconds)
      : clock_(clock), steps_(steps), step_seconds_(step_seconds) {}
  std::string name() const override { return "slow"; }
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override {
    std::size_t steps = 0;
    for (; steps < steps_ && !(steps > 0 && context.deadline.passed()); ++steps) clock_.advance(step_seconds_);
    steps_taken += steps;
    if (context.round == 0) first_round_steps = steps;
    Rng rng = stream_rng({context.seed, context.round});
    return sample_unmeasured(context.space, context.history, {}, n, rng);
  }
  std::size_t steps_taken = 0;
  std::size_t first_round_steps = 0;

 private:
  testing::ManualClock& clock_;
  std::size_t steps_;
  double step_seconds_;
};

// The scripted backend, taking `seconds_per_config` on `clock` per config like real hardware,
// and charging it.
class TimedBackend : public testing::ScriptedBackend {
 public:
  TimedBackend(testing::ManualClock& clock, std::function<double(const Config&)> seconds, double seconds_per_config)
      : ScriptedBackend(std::move(seconds), seconds_per_config), clock_(clock), seconds_per_config_(seconds_per_config) {}
  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) override {
    clock_.advance(seconds_per_config_ * static_cast<double>(configs.size()));
    return ScriptedBackend::measure(kernel, space, configs);
  }

 private:
  testing::ManualClock& clock_;
  double seconds_per_config_;
};

TEST_CASE("the time-share limit keeps a slow search's share of the wall time near its target") {
  // Per round: 4 configs x 10 ms of hardware; unlimited search would take 25 x 2 ms = 50 ms,
  // i.e. ~55% of the wall time. Limited to 10%, a round after the first may search ~4.4 ms; the
  // first, with nothing measured to price it by, makes the strategy's full 25 steps. Time is the
  // test's clock, which only the strategy's steps and the backend advance.
  Setup s;
  auto run = [&](double share) {
    testing::ManualClock clock;
    TimedBackend backend(clock, [&s](const Config& c) { return testing::toy_seconds(c, s.target); }, 0.010);
    SlowStrategy strategy(clock, 25, 0.002);
    TunerOptions options;
    options.max_measurements = 40;
    options.top_k = 4;
    options.epsilon = 0;
    options.search_time_share = share;
    Tuner tuner(backend, strategy, nullptr, nullptr, options, clock);
    const TuneResult result = tuner.run(s.kernel, s.space);
    CHECK(result.history.size() == 40);
    CHECK(backend.max_times_measured() == 1);
    CHECK(result.backend_configs == 40);
    CHECK(strategy.first_round_steps == 25);
    // The share outside the backend after the first round's search (search_after[0]).
    const double first_search = result.search_after.front();
    const double later_share = (result.wall_seconds - result.backend_wall_seconds - first_search) / (result.wall_seconds - first_search);
    return std::make_pair(later_share, strategy.steps_taken);
  };
  const auto [unlimited_share, unlimited_steps] = run(0.0);
  const auto [limited_share, limited_steps] = run(0.1);
  CAPTURE(unlimited_share, limited_share, unlimited_steps, limited_steps);
  CHECK(unlimited_steps == 10 * 25);
  CHECK(unlimited_share > 0.5);
  CHECK(limited_steps < 25 + 9 * 25 / 4);
  // The target plus at most one step's overshoot per round: no sleep to overshoot, so no slack.
  CHECK(limited_share < 0.1 + 0.002 / 0.044);
}

TEST_CASE("measurements served without running (a memo) give the search the time they stand for") {
  // An experiment's memo answers at once but charges each config's original cost (50 ms here):
  // the search must get the same allowance as on the hardware (10% share: ~22 ms a round, ~11
  // steps of 2 ms), not the strategy's minimum of one step a round it would get from wall time.
  Setup s;
  testing::ManualClock clock;
  testing::ScriptedBackend memo([&s](const Config& c) { return testing::toy_seconds(c, s.target); }, 0.050);
  SlowStrategy strategy(clock, 25, 0.002);
  TunerOptions options;
  options.max_measurements = 40;
  options.top_k = 4;
  options.epsilon = 0;
  options.search_time_share = 0.1;
  const TuneResult result = Tuner(memo, strategy, nullptr, nullptr, options, clock).run(s.kernel, s.space);
  CHECK(result.history.size() == 40);
  CAPTURE(strategy.steps_taken);
  CHECK(strategy.steps_taken > 3 * 10);  // 10 rounds
  CHECK(strategy.steps_taken < 25 * 10);  // still limited
}

TEST_CASE("the tuner updates the search model and the strategy's re-ranker alike, each measurement once") {
  Setup s;
  auto reranker = std::make_shared<testing::ToyCostModel>(Config{{8, 8, 8}});
  AnchoredOptions anchored;
  anchored.rerank_pool = 2;
  anchored.reranker = reranker;
  AnchoredSearch strategy(testing::small_strategy("evolution"), anchored);
  TunerOptions options;
  options.max_measurements = 12;
  options.top_k = 4;
  const TuneResult result = Tuner(s.backend, strategy, &s.model, nullptr, options).run(s.kernel, s.space);
  REQUIRE(result.history.size() == 12);
  CHECK(reranker->updates == s.model.updates);
  CHECK(std::accumulate(reranker->updates.begin(), reranker->updates.end(), std::size_t{0}) == 12);
}

TEST_CASE("a search time share outside [0, 1] is refused") {
  Setup s;
  auto strategy = make("random");
  TunerOptions options;
  options.max_measurements = 4;
  options.search_time_share = GENERATE(-0.1, 1.5);
  CAPTURE(options.search_time_share);
  Tuner tuner(s.backend, *strategy, nullptr, nullptr, options);
  CHECK_THROWS_WITH(tuner.run(s.kernel, s.space), Catch::Contains("search time share"));
}

}  // namespace
}  // namespace perftune

namespace perftune {
namespace {

TEST_CASE("Bayesian optimization with no prior finds a smooth landscape's optimum within a budget random search misses") {
  Setup s(Config{{16, 128, 4}});  // 512 configs; the target is 1.3x faster than any neighbour
  // A corner that fails: counted as slow by the residual, so it does not mislead the search.
  for (const std::int64_t a : {64, 128})
    for (const std::int64_t b : {1, 2})
      for (const std::int64_t c : {1, 2, 4, 8, 16, 32, 64, 128}) s.backend.failing.insert(Config{{a, b, c}});
  TunerOptions options;
  options.max_measurements = 40;  // random search finds one config in 512 with chance 40/512
  options.top_k = 8;
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    options.seed = seed;
    TargetResidualOptions gp;
    gp.exploration = 1.0;
    gp.relevance = true;
    options.batch_policy.space_filling_start = true;
    TargetResidualModel model(std::make_unique<FlatPrior>(), gp);
    auto annealing = make("annealing");
    const TuneResult bo = Tuner(s.backend, *annealing, &model, nullptr, options).run(s.kernel, s.space);
    REQUIRE(bo.history.best());
    CHECK(bo.history.entries()[*bo.history.best()].config == s.target);
    auto random = make("random");
    const TuneResult baseline = Tuner(s.backend, *random, nullptr, nullptr, options).run(s.kernel, s.space);
    REQUIRE(baseline.history.best());
    CHECK(baseline.history.entries()[*baseline.history.best()].config != s.target);
  }
}

TEST_CASE("a space-filling first batch spreads over the space before any fit") {
  Setup s;
  TargetResidualModel model(std::make_unique<FlatPrior>());
  // Eight proposals huddled in one corner: the batch still spreads (random configs join the candidates).
  std::vector<Config> huddle;
  for (const std::int64_t c : {1, 2, 4, 8, 16, 32, 64, 128}) huddle.push_back(Config{{1, 1, c}});
  const BatchPolicy policy({.space_filling_start = true});
  const std::vector<Config> batch = policy.choose(&model, s.kernel, s.space, huddle, 8, 1, 0, [](const Config&) { return false; });
  REQUIRE(batch.size() >= 8);
  double nearest = INFINITY;
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const std::vector<double> a = s.space.index_coords(batch[i]), b = s.space.index_coords(batch[j]);
      double d = 0.0;
      for (std::size_t k = 0; k < a.size(); ++k) d += (a[k] - b[k]) * (a[k] - b[k]);
      nearest = std::min(nearest, std::sqrt(d));
    }
  CHECK(nearest > 0.3);  // the huddle's configs lie 1/7 apart along one knob
}

}  // namespace
}  // namespace perftune

namespace perftune {
namespace {

TEST_CASE("a session runs the loop a round at a time, adopts its log and caps a round on request") {
  Setup s;
  auto strategy = make("random");
  const std::string dir = scratch_dir("tuning_session_adopt");
  TunerOptions options;
  options.max_measurements = 100;
  options.top_k = 4;
  {
    RecordLog log(dir + "/records.jsonl");
    TuningSession session(s.backend, *strategy, nullptr, &log, options, s.kernel, s.space);
    REQUIRE(session.step(1));
    CHECK(session.result().history.size() == 1);
    REQUIRE(session.step());
    CHECK(session.result().history.size() == 5);
    CHECK(session.report().round == 1);
    CHECK(session.result().rounds == 2);
  }
  const std::vector<Record> logged = RecordLog::load(dir + "/records.jsonl").records;
  REQUIRE(logged.size() == 5);
  // Adopted: the log's five are in the history before any round, whatever search proposes now.
  options.adopt_logged = true;
  options.seed = 99;
  testing::ScriptedBackend fresh{[&s](const Config& c) { return testing::toy_seconds(c, s.target); }};
  TuningSession resumed(fresh, *strategy, nullptr, nullptr, options, s.kernel, s.space, logged);
  CHECK(resumed.result().history.size() == 5);
  CHECK(resumed.result().from_log == 5);
  REQUIRE(resumed.step());
  CHECK(resumed.result().history.size() == 9);
  CHECK(fresh.times_measured.size() == 4);
  for (const Record& record : logged) CHECK(fresh.times_measured.count(record.config) == 0);
}

}  // namespace
}  // namespace perftune
