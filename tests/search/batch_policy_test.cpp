// The batch policy (search/batch_policy.h) over a target residual's posterior
// (surrogate/transfer/target_residual.h), on the residual tests' 16 x 16 bowl.
#include "search/batch_policy.h"

#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "surrogate/residual_test_support.h"
#include "surrogate/transfer/target_residual.h"

namespace perftune {
namespace {

using namespace residual_testing;

TEST_CASE("batch policy: the default is the tuner's top-k, the proposals in rank order") {
  const SearchSpace space = grid_space();
  TargetResidualModel model(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                             [](const Config& c) { return corner_bowl(c, 13); }}),
                            TargetResidualOptions{.exploration = 1.0});
  const BatchPolicy policy;
  CHECK(policy.pool(10) == 10);
  const std::vector<Config> ranked = ranked_by(model, space);
  CHECK(policy.choose(&model, kKernel, space, ranked, 10, 1, 0, kNothingTaken) == ranked);
  model.update(kKernel, space, random_measurements(space, 10, 1));
  CHECK(policy.choose(&model, kKernel, space, ranked, 10, 1, 1, kNothingTaken) == ranked);
  CHECK(policy.choose(nullptr, kKernel, space, ranked, 10, 1, 1, kNothingTaken) == ranked);
}

TEST_CASE("batch policy: Thompson sampling spreads a first batch over two disagreeing priors' favourites") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u, 4u, 5u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  auto make = [] {
    return TargetResidualModel(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                                [](const Config& c) { return corner_bowl(c, 13); }}),
                               TargetResidualOptions{.exploration = 1.0});
  };
  TargetResidualModel top = make(), thompson = make();
  const BatchPolicy greedy_policy, thompson_policy({.batch = BatchChoice::kThompson, .batch_pool = 3, .source_favourites = 5});
  CHECK(thompson_policy.pool(10) == 30);
  // The shares' mean puts its optimum halfway between the corners: the top-k batch sits there.
  const std::vector<Config> ranked = ranked_by(top, space);
  const std::vector<Config> greedy = first_k(greedy_policy.choose(&top, kKernel, space, ranked, 10, seed, 0, kNothingTaken), 10);
  CHECK(std::none_of(greedy.begin(), greedy.end(), [](const Config& c) { return near(c, 2) || near(c, 13); }));
  // Thompson sees the proposals (the 30 best by the mean) and each prior's favourites among the
  // configs scored so far (here all: ranked_by asked for every config).
  ranked_by(thompson, space);
  const std::vector<Config> pool(ranked.begin(), ranked.begin() + 30);
  const std::vector<Config> order = thompson_policy.choose(&thompson, kKernel, space, pool, 10, seed, 0, kNothingTaken);
  const std::vector<Config> batch = first_k(order, 10);
  REQUIRE(batch.size() == 10);
  CHECK(batch[0] == ranked[0]);  // the first slot is the top-k pick
  CHECK(std::any_of(batch.begin(), batch.end(), [](const Config& c) { return near(c, 2); }));
  CHECK(std::any_of(batch.begin(), batch.end(), [](const Config& c) { return near(c, 13); }));
  // Deterministic for (seed, round): the same call gives the same batch.
  CHECK(thompson_policy.choose(&thompson, kKernel, space, pool, 10, seed, 0, kNothingTaken) == order);
}

TEST_CASE("batch policy: after a fit, Thompson picks k distinct configs the tuner has not taken") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  const bool sample_residual = GENERATE(false, true);
  CAPTURE(seed, sample_residual);
  const SearchSpace space = grid_space();
  TargetResidualModel model(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                             [](const Config& c) { return true_log_seconds(c) + 1.0; }}),
                            TargetResidualOptions{.exploration = 1.0, .sample_residual = sample_residual});
  const BatchPolicy policy({.batch = BatchChoice::kThompson, .source_favourites = 4});
  const std::vector<Measurement> measurements = random_measurements(space, 20, seed);
  model.update(kKernel, space, measurements);
  REQUIRE(model.fit(kKernel));
  auto taken = [&](const Config& c) {
    return std::any_of(measurements.begin(), measurements.end(), [&](const Measurement& m) { return m.config == c; });
  };
  std::vector<Config> ranked;
  for (const Config& c : ranked_by(model, space))
    if (!taken(c)) ranked.push_back(c);
  ranked.resize(100);
  const std::vector<Config> order = policy.choose(&model, kKernel, space, ranked, 10, seed, 2, taken);
  const std::vector<Config> batch = first_k(order, 10);
  REQUIRE(batch.size() == 10);
  CHECK(batch[0] == ranked[0]);
  CHECK(std::none_of(batch.begin(), batch.begin() + 10, taken));
  // The data favour the source that knows the bowl: most picks lie near its optimum (10, 4).
  const auto near_optimum = std::count_if(batch.begin(), batch.end(), [](const Config& c) {
    return std::abs(c.values[0] - 10) + std::abs(c.values[1] - 4) <= 4;
  });
  CHECK(near_optimum >= 5);
  CHECK(policy.choose(&model, kKernel, space, ranked, 10, seed, 2, taken) == order);
}

TEST_CASE("batch policy: local slots step one knob off the incumbent, which the proposals never reach") {
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  CAPTURE(seed);
  const SearchSpace space = grid_space();
  // Two sources that both point to the far corner (2, 2); the target's optimum is (10, 4).
  auto make = [] {
    return TargetResidualModel(function_priors({[](const Config& c) { return corner_bowl(c, 2); },
                                                [](const Config& c) { return corner_bowl(c, 3); }}),
                               TargetResidualOptions{.exploration = 1.0, .sample_residual = true});
  };
  const Config incumbent{{10, 4}};  // the optimum: the best measured, whatever else was drawn
  std::vector<Measurement> measurements = random_measurements(space, 12, seed);
  auto taken = [&](const Config& c) {
    return std::any_of(measurements.begin(), measurements.end(), [&](const Measurement& m) { return m.config == c; });
  };
  if (!taken(incumbent)) measurements.push_back(measured(incumbent));
  auto one_knob_off = [&](const Config& c) { return (c.values[0] == 10) != (c.values[1] == 4); };
  for (const std::size_t local_slots : {0u, 3u}) {
    CAPTURE(local_slots);
    TargetResidualModel model = make();
    const BatchPolicy policy({.batch = BatchChoice::kThompson, .incumbent_neighbours = local_slots > 0 ? 1u : 0u, .local_slots = local_slots});
    model.update(kKernel, space, measurements);
    std::vector<Config> ranked;  // the search's proposals: the sources' corner, far from the incumbent
    for (const Config& c : ranked_by(model, space))
      if (!taken(c) && c.values[0] < 8 && c.values[1] < 3 && ranked.size() < 30) ranked.push_back(c);
    const std::vector<Config> batch = first_k(policy.choose(&model, kKernel, space, ranked, 6, seed, 1, taken), 6);
    REQUIRE(batch.size() == 6);
    CHECK(std::none_of(batch.begin(), batch.end(), taken));
    // Without a neighbourhood nothing reaches the incumbent; with one, slots 1..local_slots take its
    // unmeasured one-knob changes (and the other slots may too, they compete with the proposals).
    const auto local = static_cast<std::size_t>(std::count_if(batch.begin(), batch.end(), one_knob_off));
    if (local_slots == 0) CHECK(local == 0);
    else CHECK(local >= local_slots);
    for (std::size_t slot = 1; slot <= local_slots; ++slot) CHECK(one_knob_off(batch[slot]));
  }
}

TEST_CASE("batch policy: a local slot whose neighbours the first slot took falls back to every candidate") {
  // {a: 0, 1, 2} x {b: 0, 1}; (0, 0) and (2, 1) measured, (0, 0) the best: its three unmeasured
  // neighbours fill the three local slots' quota, but the prior's favourite (1, 0) is one of them
  // and goes first, so the last local slot has none left and takes the remaining proposal.
  const SearchSpace space({{"a", {0, 1, 2}}, {"b", {0, 1}}});
  auto favourite = [](const Config& c) { return c == Config{{1, 0}} ? -10.0 : 0.0; };
  TargetResidualModel model(function_priors({favourite}), TargetResidualOptions{.exploration = 1.0});
  const BatchPolicy policy({.batch = BatchChoice::kThompson, .incumbent_neighbours = 1, .local_slots = 3});
  const std::vector<Measurement> measurements = {
      Measurement{Config{{0, 0}}, MeasureResult::from_repeats({1e-3}, 0.0)},
      Measurement{Config{{2, 1}}, MeasureResult::from_repeats({2e-3}, 0.0)}};
  model.update(kKernel, space, measurements);
  REQUIRE(model.fit(kKernel));
  auto taken = [&](const Config& c) { return c == Config{{0, 0}} || c == Config{{2, 1}}; };
  const std::vector<Config> batch = first_k(policy.choose(&model, kKernel, space, {Config{{1, 1}}}, 4, 1, 1, taken), 4);
  REQUIRE(batch.size() == 4);
  CHECK(batch[0] == Config{{1, 0}});
  CHECK(std::set<Config>(batch.begin(), batch.end()) ==
        std::set<Config>{Config{{1, 0}}, Config{{2, 0}}, Config{{0, 1}}, Config{{1, 1}}});
}

TEST_CASE("batch policy: a pool of no proposals per slot is refused") {
  CHECK_THROWS_AS(BatchPolicy({.batch = BatchChoice::kThompson, .batch_pool = 0}), std::invalid_argument);
}

}  // namespace
}  // namespace perftune
