// The strategies that search on a cost model: with a toy model that rewards one tile config, each
// must propose it first; they must batch predict() calls, skip measured configs, and give the same
// proposals for the same seed whatever the number of threads.
#include <memory>

#include <catch2/catch.hpp>
#include <tbb/global_control.h>

#include "search/evolutionary_search.h"
#include "search/exhaustive_search.h"
#include "search/simulated_annealing.h"
#include "search/small_strategies.h"
#include "search/toy_cost_model.h"

namespace perftune {
namespace {

std::unique_ptr<Strategy> make(const std::string& name) { return testing::small_strategy(name); }

TEST_CASE("each model-based strategy proposes the config the toy model rewards") {
  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution", "exhaustive");
  const auto [t0, t1, red] = GENERATE(table<std::int64_t, std::int64_t, std::int64_t>({{64, 8, 32}, {1, 512, 2}, {16, 16, 16}}));
  const std::uint64_t seed = GENERATE(1u, 2u);
  CAPTURE(name, t0, t1, red, seed);
  const SearchSpace space = testing::tile_space(10);  // 1000 configs
  const Config target{{t0, t1, red}};
  testing::ToyCostModel model(target);
  const Kernel kernel = testing::toy_kernel();
  History history;
  auto strategy = make(name);
  const auto proposed = strategy->propose(SearchContext{kernel, space, &model, history, seed, 0}, 8);
  REQUIRE_FALSE(proposed.empty());
  CHECK(proposed.front() == target);
  CHECK(proposed.size() == 8);
}

TEST_CASE("model-based strategies skip measured configs and score whole batches") {
  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution", "exhaustive");
  CAPTURE(name);
  const SearchSpace space = testing::tile_space(10);
  const Config target{{64, 8, 32}};
  testing::ToyCostModel model(target);
  const Kernel kernel = testing::toy_kernel();
  History history;
  history.add(target, MeasureResult::from_repeats({1e-3}, 0.0));
  auto strategy = make(name);
  const auto proposed = strategy->propose(SearchContext{kernel, space, &model, history, 5, 0}, 6);
  REQUIRE(proposed.size() == 6);
  for (const Config& config : proposed) CHECK_FALSE(history.contains(config));
  // The runner-up is one step from the target on one knob.
  CHECK(testing::toy_seconds(proposed.front(), target) == Approx(1.3e-3));
  for (std::size_t batch : model.batch_sizes) CHECK(batch >= 32);
}

TEST_CASE("model-based strategies are deterministic for a seed, whatever the thread count") {
  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution");
  CAPTURE(name);
  const SearchSpace space = testing::tile_space(10, [](const Config& c) { return c.values[0] * c.values[1] <= 8192; });
  testing::ToyCostModel model(Config{{128, 32, 4}});
  const Kernel kernel = testing::toy_kernel();
  History history;
  auto run_rounds = [&](std::size_t threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    auto strategy = make(name);
    std::vector<Config> all;
    for (std::size_t round = 0; round < 3; ++round) {  // chains carried across rounds must replay too
      auto proposed = strategy->propose(SearchContext{kernel, space, &model, history, 42, round}, 16);
      all.insert(all.end(), proposed.begin(), proposed.end());
    }
    return all;
  };
  const auto single = run_rounds(1);
  CHECK(run_rounds(4) == single);
  CHECK(run_rounds(1) == single);
}

TEST_CASE("a passed deadline cuts a round to the strategy's minimum: one annealing step, one scored generation") {
  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution");
  CAPTURE(name);
  const SearchSpace space = testing::tile_space(10);
  const Kernel kernel = testing::toy_kernel();
  History history;
  testing::ToyCostModel unlimited_model(Config{{64, 8, 32}}), cut_model(Config{{64, 8, 32}});
  auto unlimited = make(name), cut = make(name);
  const auto full = unlimited->propose(SearchContext{kernel, space, &unlimited_model, history, 1, 0}, 8);
  const auto short_round =
      cut->propose(SearchContext{kernel, space, &cut_model, history, 1, 0, SearchDeadline::after(0.0)}, 8);
  // Annealing scores its start states and one step; evolution its initial population only.
  CHECK(cut_model.batch_sizes.size() == (name == "annealing" ? 2u : 1u));
  CHECK(unlimited_model.batch_sizes.size() > cut_model.batch_sizes.size());
  CHECK(short_round.size() == 8);  // still a full batch of distinct proposals
  CHECK(full.front() == Config{{64, 8, 32}});
}

// The toy model, recording the first batch it is asked to score (a strategy's starting states).
class FirstBatch : public CostModel {
 public:
  explicit FirstBatch(testing::ToyCostModel& inner) : inner_(inner) {}
  std::string name() const override { return "first-batch"; }
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs, std::span<float> out) override {
    if (first.empty()) first.assign(configs.begin(), configs.end());
    inner_.predict(kernel, space, configs, out);
  }
  std::vector<Config> first;

 private:
  testing::ToyCostModel& inner_;
};

TEST_CASE("annealing chains and the evolution population continue next round from where the last round left them") {
  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution");
  CAPTURE(name);
  const SearchSpace space = testing::tile_space(10);
  const Kernel kernel = testing::toy_kernel();
  testing::ToyCostModel model(Config{{64, 8, 32}});
  History history;
  AnnealingOptions annealing_options;
  annealing_options.chains = 16;
  annealing_options.steps = 20;
  SimulatedAnnealing annealing(annealing_options);
  EvolutionOptions evolution_options;
  evolution_options.population = 64;
  evolution_options.generations = 2;
  evolution_options.measured_share = 0.0;  // the population alone, no measured seeds
  EvolutionarySearch evolution(evolution_options);
  Strategy& strategy = name == "annealing" ? static_cast<Strategy&>(annealing) : evolution;
  // What the next round must start from: every chain's state; the population's unmeasured members.
  auto carried = [&] {
    if (name == "annealing") return annealing.chain_states();
    std::vector<Config> unmeasured;
    for (const Config& config : evolution.population())
      if (!history.contains(config)) unmeasured.push_back(config);
    return unmeasured;
  };
  const std::size_t batch = name == "annealing" ? 16 : 64;
  for (std::size_t round = 0; round < 3; ++round) {
    CAPTURE(round);
    const std::vector<Config> before = carried();
    FirstBatch recorder(model);  // the first batch scored: the round's starting states
    const auto proposed = strategy.propose(SearchContext{kernel, space, &recorder, history, 9, round}, 4);
    REQUIRE(recorder.first.size() == batch);
    if (round > 0) {
      REQUIRE_FALSE(before.empty());
      REQUIRE(before.size() <= batch);
      CHECK(std::vector<Config>(recorder.first.begin(), recorder.first.begin() + static_cast<std::ptrdiff_t>(before.size())) == before);
    }
    for (const Config& config : proposed) history.add(config, MeasureResult::from_repeats({1.0}, 0.0));
  }
}

TEST_CASE("model-based strategies refuse to run without a model") {
  const SearchSpace space = testing::tile_space(3);
  const Kernel kernel = testing::toy_kernel();
  History history;
  for (const std::string name : {"annealing", "evolution"}) {
    CAPTURE(name);
    auto strategy = make(name);
    CHECK(strategy->needs_model());
    CHECK_THROWS_AS(strategy->propose(SearchContext{kernel, space, nullptr, history, 1, 0}, 4), std::invalid_argument);
  }
}

TEST_CASE("exhaustive search refuses a space larger than its limit") {
  const SearchSpace space = testing::tile_space(10);
  const Kernel kernel = testing::toy_kernel();
  History history;
  ExhaustiveOptions options;
  options.max_configs = 999;
  ExhaustiveSearch search(options);
  CHECK_THROWS_WITH(search.propose(SearchContext{kernel, space, nullptr, history, 1, 0}, 4),
                    Catch::Contains("more than 999 configs"));
}

TEST_CASE("without a model, exhaustive search proposes unmeasured configs in enumeration order") {
  const SearchSpace space = testing::tile_space(2);
  const Kernel kernel = testing::toy_kernel();
  History history;
  const auto all = space.enumerate();
  history.add(all[0], MeasureResult::from_repeats({1.0}, 0.0));
  ExhaustiveSearch search;
  const auto proposed = search.propose(SearchContext{kernel, space, nullptr, history, 1, 0}, 3);
  CHECK(proposed == std::vector<Config>{all[1], all[2], all[3]});
}

}  // namespace
}  // namespace perftune

#include "ir/fusion.h"
#include "ir/json_view.h"
#include "ir/program_json.h"
#include "test_support.h"

namespace perftune {
namespace {

// Rewards one fusion decision: the predicted time grows with the Hamming distance to it.
class FusionTargetModel : public CostModel {
 public:
  explicit FusionTargetModel(Config target) : target_(std::move(target)) {}
  std::string name() const override { return "fusion-target"; }
  void predict(const Kernel&, const SearchSpace&, std::span<const Config> configs, std::span<float> out) override {
    for (std::size_t i = 0; i < configs.size(); ++i) {
      int distance = 0;
      for (std::size_t k = 0; k < target_.values.size(); ++k) distance += configs[i].values[k] != target_.values[k];
      out[i] = static_cast<float>(distance);
    }
  }

 private:
  Config target_;
};

TEST_CASE("strategies search a fusion space through its knobs, keeping only legal partitions") {
  const std::string path = source_path("configs/programs/mlp_block_small.json");
  const Program program = program_from_json(JsonView(parse_json_file(path), path));
  const std::vector<std::size_t> edges = fusible_edges(program);
  REQUIRE(edges.size() >= 2);
  std::vector<Knob> knobs;
  for (std::size_t e : edges) knobs.push_back({fuse_knob(e), {0, 1}});
  auto to_fusion = [&](const Config& config) {
    FusionConfig fusion = FusionConfig::none(program);
    for (std::size_t k = 0; k < edges.size(); ++k) fusion.fused[edges[k]] = config.values[k] == 1;
    return fusion;
  };
  const SearchSpace space(knobs, [&](const Config& config) { return is_legal(program, to_fusion(config)); });
  // The target: XLA's greedy elementwise fusion, legal by construction.
  const FusionConfig greedy = FusionConfig::greedy_elementwise(program);
  Config target;
  for (std::size_t e : edges) target.values.push_back(greedy.fused[e] ? 1 : 0);
  REQUIRE(space.contains(target));

  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution", "exhaustive");
  CAPTURE(name, edges.size());
  FusionTargetModel model(target);
  const Kernel kernel("mlp_block_small", program);
  History history;
  auto strategy = testing::small_strategy(name);
  const auto proposed = strategy->propose(SearchContext{kernel, space, &model, history, 3, 0}, 4);
  REQUIRE_FALSE(proposed.empty());
  CHECK(proposed.front() == target);
  for (const Config& config : proposed) CHECK(is_legal(program, to_fusion(config)));
}

}  // namespace
}  // namespace perftune
