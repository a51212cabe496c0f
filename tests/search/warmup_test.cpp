// The warm-up of model-based strategies (search/warmup.h): random, model-free proposals until the
// history holds `warmup` measurements, the model's favourites afterwards. (Without a warm-up the
// first round follows the model: model_strategies_test.cpp.)
#include "search/warmup.h"

#include <memory>
#include <set>

#include <catch2/catch.hpp>

#include "search/evolutionary_search.h"
#include "search/simulated_annealing.h"
#include "search/toy_cost_model.h"

namespace perftune {
namespace {

std::unique_ptr<Strategy> with_warmup(const std::string& name, std::size_t warmup) {
  if (name == "annealing") {
    AnnealingOptions options;
    options.chains = 16;
    options.steps = 60;
    options.warmup = warmup;
    return std::make_unique<SimulatedAnnealing>(options);
  }
  EvolutionOptions options;
  options.population = 256;
  options.warmup = warmup;
  return std::make_unique<EvolutionarySearch>(options);
}

TEST_CASE("during the warm-up a model-based strategy proposes random unmeasured configs without its model") {
  const std::string name = GENERATE(as<std::string>{}, "annealing", "evolution");
  const std::uint64_t seed = GENERATE(1u, 2u);
  CAPTURE(name, seed);
  const SearchSpace space = testing::tile_space(10);
  const Config target{{64, 8, 32}};
  testing::ToyCostModel model(target);
  const Kernel kernel = testing::toy_kernel();
  History history;
  history.add(Config{{1, 1, 1}}, MeasureResult::from_repeats({1.0}, 0.0));
  auto strategy = with_warmup(name, 9);

  const auto first = strategy->propose(SearchContext{kernel, space, &model, history, seed, 0}, 8);
  CHECK(model.batch_sizes.empty());  // the model was not asked
  REQUIRE(first.size() == 8);
  std::set<std::string> distinct;
  for (const Config& config : first) {
    CHECK(space.contains(config));
    CHECK_FALSE(history.contains(config));
    distinct.insert(config.to_string());
  }
  CHECK(distinct.size() == 8);
  // Reproducible for the seed and round.
  CHECK(with_warmup(name, 9)->propose(SearchContext{kernel, space, &model, history, seed, 0}, 8) == first);

  // Once the history holds `warmup` measurements, the model steers: its favourite comes first.
  for (const Config& config : first) history.add(config, MeasureResult::from_repeats({1.0}, 0.0));
  REQUIRE(history.size() == 9);
  const auto steered = strategy->propose(SearchContext{kernel, space, &model, history, seed, 1}, 8);
  CHECK_FALSE(model.batch_sizes.empty());
  REQUIRE_FALSE(steered.empty());
  CHECK(steered.front() == target);
}

}  // namespace
}  // namespace perftune
