#include "search/random_search.h"

#include <set>

#include <catch2/catch.hpp>

#include "search/toy_cost_model.h"

namespace perftune {
namespace {

TEST_CASE("random search proposes distinct, valid, unmeasured configs") {
  const SearchSpace space = testing::tile_space(4);  // 64 configs
  const Kernel kernel = testing::toy_kernel();
  History history;
  Rng rng(11);
  while (history.size() < 20)
    if (Config config = space.sample(rng); !history.contains(config)) history.add(config, MeasureResult::from_repeats({1.0}, 0.0));
  RandomSearch search;
  const std::size_t seed = GENERATE(1u, 2u);
  CAPTURE(seed);
  const SearchContext context{kernel, space, nullptr, history, seed, 0};
  const auto proposed = search.propose(context, 30);
  CHECK(proposed.size() == 30);
  std::set<Config> distinct(proposed.begin(), proposed.end());
  CHECK(distinct.size() == proposed.size());
  for (const Config& config : proposed) {
    CHECK(space.contains(config));
    CHECK_FALSE(history.contains(config));
  }
  CHECK(search.propose(context, 30) == proposed);  // deterministic for (seed, round)
}

TEST_CASE("random search returns what is left of a nearly exhausted space, then nothing") {
  const SearchSpace space = testing::tile_space(2);  // 8 configs
  const Kernel kernel = testing::toy_kernel();
  History history;
  const auto all = space.enumerate();
  for (std::size_t i = 0; i < 6; ++i) history.add(all[i], MeasureResult::from_repeats({1.0}, 0.0));
  RandomSearch search;
  auto proposed = search.propose(SearchContext{kernel, space, nullptr, history, 1, 0}, 5);
  REQUIRE(proposed.size() == 2);
  for (const Config& config : proposed) history.add(config, MeasureResult::from_repeats({1.0}, 0.0));
  CHECK(search.propose(SearchContext{kernel, space, nullptr, history, 1, 1}, 5).empty());
}

}  // namespace
}  // namespace perftune
