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
