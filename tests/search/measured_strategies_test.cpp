// The model-free strategies steer by measured runtimes only. A small loop here stands in for the
// tuner: propose, "measure" with the toy runtime, record, repeat.
#include <memory>
#include <set>

#include <catch2/catch.hpp>

#include "search/measured_annealing.h"
#include "search/measured_evolution.h"
#include "search/small_strategies.h"
#include "search/toy_cost_model.h"

namespace perftune {
namespace {

std::unique_ptr<Strategy> make(const std::string& name) { return testing::small_strategy(name); }

History tune(Strategy& strategy, const SearchSpace& space, const Config& target, std::uint64_t seed, std::size_t budget,
             std::size_t batch) {
  const Kernel kernel = testing::toy_kernel();
  History history;
  for (std::size_t round = 0; history.size() < budget; ++round) {
    const auto proposed = strategy.propose(SearchContext{kernel, space, nullptr, history, seed, round}, batch);
    REQUIRE_FALSE(proposed.empty());
    std::set<Config> distinct(proposed.begin(), proposed.end());
    REQUIRE(distinct.size() == proposed.size());
    for (const Config& config : proposed) {
      REQUIRE(space.contains(config));
      history.add(config, MeasureResult::from_repeats({testing::toy_seconds(config, target)}, 0.0));
    }
  }
  return history;
}

TEST_CASE("each model-free strategy finds the rewarded config from measurements alone") {
  const std::string name = GENERATE(as<std::string>{}, "measured_annealing", "measured_evolution");
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(name, seed);
  const SearchSpace space = testing::tile_space(8);  // 512 configs
  const Config target{{32, 4, 16}};
  auto strategy = make(name);
  const History history = tune(*strategy, space, target, seed, 200, 8);
  REQUIRE(history.best());
  CHECK(history.entries()[*history.best()].config == target);
}

TEST_CASE("model-free strategies are reproducible for a seed") {
  const std::string name = GENERATE(as<std::string>{}, "measured_annealing", "measured_evolution");
  CAPTURE(name);
  const SearchSpace space = testing::tile_space(8);
  const Config target{{2, 64, 8}};
  auto first = make(name), second = make(name);
  const History a = tune(*first, space, target, 9, 60, 6), b = tune(*second, space, target, 9, 60, 6);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a.entries()[i].config == b.entries()[i].config);
}

TEST_CASE("model-free strategies stop proposing when the space is used up") {
  const std::string name = GENERATE(as<std::string>{}, "measured_annealing", "measured_evolution");
  CAPTURE(name);
  const SearchSpace space = testing::tile_space(2);  // 8 configs
  auto strategy = make(name);
  const History history = tune(*strategy, space, Config{{1, 2, 1}}, 4, 8, 3);
  CHECK(history.size() == 8);
  const Kernel kernel = testing::toy_kernel();
  CHECK(strategy->propose(SearchContext{kernel, space, nullptr, history, 4, 99}, 3).empty());
}

}  // namespace
}  // namespace perftune
