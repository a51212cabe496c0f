#include "autotuner/factories/strategy_factory.h"

#include <catch2/catch.hpp>

#include "ir/input_error.h"

namespace perftune {
namespace {

StrategySpec parse(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text);
  return parse_strategy_spec(JsonView(json, "campaign.json", "$.strategy"));
}

TEST_CASE("model-based strategies take a random warm-up; 0 or absent means none") {
  CHECK(std::get<AnnealingOptions>(parse(R"({"type": "annealing", "warmup": 10})").options).warmup == 10);
  CHECK(std::get<AnnealingOptions>(parse(R"({"type": "annealing"})").options).warmup == 0);
  CHECK(std::get<EvolutionOptions>(parse(R"({"type": "evolution", "warmup": 0})").options).warmup == 0);
  CHECK(std::get<EvolutionOptions>(parse(R"({"type": "evolution", "warmup": 20})").options).warmup == 20);
}

TEST_CASE("a bad warm-up names its place") {
  const auto [text, place, expected] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"type": "annealing", "warmup": -1})", "$.strategy.warmup", ">= 0"},
      {R"({"type": "evolution", "warmup": 2.5})", "$.strategy.warmup", "integer"},
      {R"({"type": "measured_evolution", "warmup": 10})", "$.strategy.warmup", "no such key"},
  }));
  CAPTURE(text);
  CHECK_THROWS_AS(parse(text), InputError);
  CHECK_THROWS_WITH(parse(text), Catch::Contains("campaign.json") && Catch::Contains(place) && Catch::Contains(expected));
}

TEST_CASE("an anchored annealing or evolution wraps its strategy; absent, the strategy is plain") {
  const StrategySpec anchored = parse(R"({"type": "evolution", "population": 64, "anchored": {"share": 0.25, "depth": 2, "diversity_pool": 4}})");
  REQUIRE(anchored.anchored);
  CHECK(anchored.anchored->diversity_pool == 4);
  CHECK(anchored.anchored->share == 0.25);
  CHECK(anchored.anchored->depth == 2);
  CHECK(anchored.anchored->beam == AnchoredOptions{}.beam);
  CHECK(AnchoredOptions{}.diversity_pool == 1);  // the model's best, as before the option
  CHECK(make_strategy(anchored)->name() == "evolution anchored");
  const StrategySpec plain = parse(R"({"type": "annealing"})");
  CHECK_FALSE(plain.anchored);
  CHECK(make_strategy(plain)->name() == "annealing");
}

TEST_CASE("a re-ranking anchored strategy loads its model through the loader it is given") {
  const StrategySpec spec = parse(R"({"type": "evolution", "anchored": {"rerank": {"checkpoint": "trees.json", "pool": 6}}})");
  REQUIRE(spec.anchored);
  CHECK(spec.anchored->rerank_pool == 6);
  CHECK(spec.rerank_checkpoint == "trees.json");
  CHECK_THROWS_WITH(make_strategy(spec), Catch::Contains("trees.json"));
  std::vector<std::string> loaded;
  const auto strategy = make_strategy(spec, [&](const std::string& checkpoint) {
    loaded.push_back(checkpoint);
    return std::shared_ptr<CostModel>();
  });
  CHECK(loaded == std::vector<std::string>{"trees.json"});
  CHECK(strategy->name() == "evolution anchored");
}

TEST_CASE("a bad anchored block names its place") {
  const auto [text, place, expected] = GENERATE(table<std::string, std::string, std::string>({
      {R"({"type": "annealing", "anchored": {"share": 1.5}})", "$.strategy.anchored.share", "[0, 1]"},
      {R"({"type": "evolution", "anchored": {"depth": 0}})", "$.strategy.anchored.depth", "positive"},
      {R"({"type": "evolution", "anchored": {"width": 3}})", "$.strategy.anchored.width", "no such key"},
      {R"({"type": "evolution", "anchored": {"diversity_pool": 0}})", "$.strategy.anchored.diversity_pool", "positive"},
      {R"({"type": "measured_evolution", "anchored": {}})", "$.strategy.anchored", "no such key"},
      {R"({"type": "evolution", "anchored": {"rerank": {"checkpoint": "x.json", "pool": 1}}})", "$.strategy.anchored.rerank.pool", "2 or more"},
      {R"({"type": "evolution", "anchored": {"rerank": {"pool": 4}}})", "$.strategy.anchored.rerank", "\"checkpoint\""},
  }));
  CAPTURE(text);
  CHECK_THROWS_AS(parse(text), InputError);
  CHECK_THROWS_WITH(parse(text), Catch::Contains("campaign.json") && Catch::Contains(place) && Catch::Contains(expected));
}

}  // namespace
}  // namespace perftune
