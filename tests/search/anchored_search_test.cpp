// The anchored wrapper: its share of the proposals lies near the anchors (the campaign's first
// configs, the best measured), the rest is the wrapped strategy's; anchors and measured configs
// are never proposed; without anchors it is the wrapped strategy.
#include "search/anchored_search.h"

#include <algorithm>
#include <memory>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "search/small_strategies.h"
#include "search/toy_cost_model.h"

namespace perftune {
namespace {

using testing::knobs_apart;

AnchoredSearch anchored(const std::string& inner, double share, std::size_t depth) {
  AnchoredOptions options;
  options.share = share;
  options.depth = depth;
  return AnchoredSearch(testing::small_strategy(inner), options);
}

// A toy space whose model prefers {512, 512, 512}, anchored at {1, 1, 1}: three knobs apart.
struct ToyAnchored {
  SearchSpace space = testing::tile_space(10);
  Config target{{512, 512, 512}};
  testing::ToyCostModel model{target};
  Kernel kernel = testing::toy_kernel();
  History history;
  std::vector<Config> anchors{Config{{1, 1, 1}}};
  SearchContext context() { return SearchContext{kernel, space, &model, history, 1, 0, {}, anchors}; }
};

TEST_CASE("an anchored strategy proposes its share near the anchors and the wrapped strategy's picks after them") {
  const std::string inner = GENERATE(as<std::string>{}, "annealing", "evolution");
  CAPTURE(inner);
  ToyAnchored toy;
  AnchoredSearch strategy = anchored(inner, 0.5, 1);
  const auto proposed = strategy.propose(toy.context(), 8);
  REQUIRE(proposed.size() == 8);
  // The model's best one-knob changes of the anchor: each knob moved to 512, then the first to 256.
  for (std::size_t i = 0; i < 4; ++i) CHECK(knobs_apart(proposed[i], toy.anchors.front()) == 1);
  CHECK(proposed[0] != proposed[1]);
  CHECK(std::count(proposed.begin(), proposed.end(), toy.target) == 1);  // the wrapped search's best
  CHECK(proposed[4] == toy.target);
  CHECK(std::find(proposed.begin(), proposed.end(), toy.anchors.front()) == proposed.end());
}

TEST_CASE("with a diversity pool both parts of the proposals cover more knob values, each from its best config") {
  const std::string inner = GENERATE(as<std::string>{}, "annealing", "evolution");
  CAPTURE(inner);
  ToyAnchored toy;
  const SearchContext context = toy.context();
  const auto plain = anchored(inner, 0.5, 2).propose(context, 8);
  AnchoredOptions options;
  options.depth = 2;
  options.diversity_pool = 3;
  const auto diverse = AnchoredSearch(testing::small_strategy(inner), options).propose(context, 8);
  REQUIRE(plain.size() == 8);
  REQUIRE(diverse.size() == 8);
  auto values_covered = [](std::span<const Config> configs) {
    std::set<std::pair<std::size_t, std::int64_t>> covered;
    for (const Config& config : configs)
      for (std::size_t knob = 0; knob < config.values.size(); ++knob) covered.emplace(knob, config.values[knob]);
    return covered.size();
  };
  CHECK(diverse[0] == plain[0]);
  CHECK(diverse[4] == toy.target);
  for (std::size_t i = 0; i < 4; ++i) CHECK(knobs_apart(diverse[i], toy.anchors.front()) <= 2);
  CHECK(values_covered(std::span(diverse).first(4)) > values_covered(std::span(plain).first(4)));
  CHECK(values_covered(diverse) > values_covered(plain));
}

TEST_CASE("with a re-ranker each part of the proposals is its best of the search model's wider pool") {
  const std::string inner = GENERATE(as<std::string>{}, "annealing", "evolution");
  CAPTURE(inner);
  ToyAnchored toy;
  const SearchContext context = toy.context();
  AnchoredOptions wide;
  wide.depth = 2;
  const auto plain = AnchoredSearch(testing::small_strategy(inner), wide).propose(context, 8);
  // The search model's own pools, four times as wide, are what the re-ranker chooses from.
  const auto local_pool = near_anchors(context, 4 * 4, wide);
  // A re-ranker that prefers the anchor's corner of the space, unlike the search model.
  auto reranker = std::make_shared<testing::ToyCostModel>(Config{{1, 1, 2}});
  AnchoredOptions options = wide;
  options.rerank_pool = 4;
  options.reranker = reranker;
  const auto reranked = AnchoredSearch(testing::small_strategy(inner), options).propose(context, 8);
  REQUIRE(reranked.size() == 8);
  REQUIRE(plain.size() == 8);
  for (std::size_t i = 0; i < 4; ++i)
    CHECK(std::find(local_pool.begin(), local_pool.end(), reranked[i]) != local_pool.end());
  // The re-ranker's best of the local pool comes first; plain proposals start at the model's best.
  const auto by_reranker = rank_by_model(*reranker, toy.kernel, toy.space, local_pool);
  CHECK(reranked[0] == by_reranker[0]);
  CHECK(reranked[0] != plain[0]);
  CHECK_FALSE(reranker->batch_sizes.empty());
}

TEST_CASE("the re-ranker is a model the strategy learns with, and the tuner's to update") {
  ToyAnchored toy;
  auto reranker = std::make_shared<testing::ToyCostModel>(Config{{1, 1, 2}});
  AnchoredOptions options;
  options.depth = 1;
  options.rerank_pool = 2;
  options.reranker = reranker;
  AnchoredSearch strategy(testing::small_strategy("evolution"), options);
  CHECK(strategy.learning_models() == std::vector<CostModel*>{reranker.get()});
  CHECK(AnchoredSearch(testing::small_strategy("evolution"), AnchoredOptions{}).learning_models().empty());
  toy.history.add(Config{{2, 2, 2}}, MeasureResult::from_repeats({2e-3}, 0.0));
  strategy.propose(toy.context(), 4);
  CHECK(reranker->updates.empty());  // proposing updates no model: the tuner does (tuner_test.cpp)
  CHECK(toy.model.updates.empty());
}

TEST_CASE("the beam walks several knobs from an anchor, through measured configs, proposing none of them") {
  const SearchSpace space = testing::tile_space(10);
  const Config target{{512, 512, 512}};
  testing::ToyCostModel model(target);
  const Kernel kernel = testing::toy_kernel();
  History history;
  history.add(Config{{512, 1, 1}}, MeasureResult::from_repeats({1.0}, 0.0));  // worse than it predicts
  const std::vector<Config> anchors{Config{{1, 1, 1}}};
  const SearchContext context{kernel, space, &model, history, 3, 0, {}, anchors};
  AnchoredOptions options;
  options.depth = 3;
  options.measured_anchors = 0;  // the measured config is only a waypoint here
  const auto near = near_anchors(context, 5, options);
  REQUIRE(near.size() == 5);
  CHECK(near.front() == target);  // three knobs from the anchor
  for (const Config& config : near) {
    CHECK_FALSE(history.contains(config));
    CHECK(config != anchors.front());
  }
  options.depth = 2;
  for (const Config& config : near_anchors(context, 5, options)) CHECK(knobs_apart(config, anchors.front()) <= 2);
}

TEST_CASE("the best measured configs anchor the later rounds") {
  const SearchSpace space = testing::tile_space(10);
  testing::ToyCostModel model(Config{{512, 512, 512}});
  const Kernel kernel = testing::toy_kernel();
  History history;
  const Config measured_best{{4, 4, 4}};
  history.add(measured_best, MeasureResult::from_repeats({1e-3}, 0.0));
  history.add(Config{{2, 2, 2}}, MeasureResult::from_repeats({2e-3}, 0.0));
  AnchoredOptions options;
  options.depth = 1;
  options.measured_anchors = 1;
  const auto near = near_anchors(SearchContext{kernel, space, &model, history, 3, 1}, 6, options);
  REQUIRE(near.size() == 6);
  for (const Config& config : near) CHECK(knobs_apart(config, measured_best) == 1);
  options.measured_anchors = 0;
  CHECK(near_anchors(SearchContext{kernel, space, &model, history, 3, 1}, 6, options).empty());
}

TEST_CASE("without anchors an anchored strategy proposes what the wrapped strategy proposes") {
  const SearchSpace space = testing::tile_space(10);
  testing::ToyCostModel model(Config{{64, 8, 32}});
  const Kernel kernel = testing::toy_kernel();
  History history;
  AnchoredSearch strategy = anchored("evolution", 0.5, 3);
  auto alone = testing::small_strategy("evolution");
  const SearchContext context{kernel, space, &model, history, 7, 0};
  CHECK(strategy.propose(context, 8) == alone->propose(context, 8));
}

TEST_CASE("an anchored strategy needs a model-based strategy to wrap and a share in [0, 1]") {
  CHECK_THROWS_AS(AnchoredSearch(testing::small_strategy("random"), {}), std::invalid_argument);
  AnchoredOptions too_much;
  too_much.share = 1.5;
  CHECK_THROWS_AS(AnchoredSearch(testing::small_strategy("annealing"), too_much), std::invalid_argument);
}

}  // namespace
}  // namespace perftune
