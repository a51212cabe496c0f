#include "autotuner/factories/strategy_factory.h"
#include "autotuner/factories/settings_reference.h"

#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "test_support.h"

namespace perftune {
namespace {

StrategySpec parse(const std::string& text) {
  const nlohmann::json json = nlohmann::json::parse(text);
  return parse_strategy_spec(JsonView(json, "campaign.json", "$.strategy"));
}

TEST_CASE("every strategy setting is read from its table, with the struct's defaults where absent") {
  const auto annealing = std::get<AnnealingOptions>(parse(R"({"type": "annealing", "chains": 7, "steps": 9, "early_stop": 3,
      "start_temperature": 2.5, "end_temperature": 0.5, "restart_after": 11, "mutation": {"random_value": 1, "neighbour_step": 0}})").options);
  CHECK(annealing.chains == 7);
  CHECK(annealing.steps == 9);
  CHECK(annealing.early_stop == 3);
  CHECK(annealing.start_temperature == 2.5);
  CHECK(annealing.end_temperature == 0.5);
  CHECK(annealing.restart_after == 11);
  CHECK(annealing.mutation.random_value == 1);
  CHECK(annealing.mutation.neighbour_step == 0);
  CHECK(annealing.mutation.several_knobs == MutationWeights{}.several_knobs);
  const auto evolution = std::get<EvolutionOptions>(parse(R"({"type": "evolution", "population": 64, "measured_share": 0.5})").options);
  CHECK(evolution.population == 64);
  CHECK(evolution.measured_share == 0.5);
  CHECK(evolution.generations == EvolutionOptions{}.generations);
  CHECK(std::get<ExhaustiveOptions>(parse(R"({"type": "exhaustive", "max_configs": 1000})").options).max_configs == 1000);
  CHECK(std::get<MeasuredAnnealingOptions>(parse(R"({"type": "measured_annealing", "chains": 0, "cooling": 0.5})").options).cooling == 0.5);
  CHECK(std::get<MeasuredEvolutionOptions>(parse(R"({"type": "measured_evolution", "parents": 5})").options).parents == 5);
  const StrategySpec anchored = parse(R"({"type": "evolution", "anchored": {"share": 0.25, "depth": 2, "measured_anchors": 0,
      "rerank": {"checkpoint": "trees.json"}}})");
  REQUIRE(anchored.anchored);
  CHECK(anchored.anchored->share == 0.25);
  CHECK(anchored.anchored->depth == 2);
  CHECK(anchored.anchored->measured_anchors == 0);
  CHECK(anchored.anchored->beam == AnchoredOptions{}.beam);
  CHECK(anchored.anchored->rerank_pool == 8);
  CHECK(anchored.rerank_checkpoint == "trees.json");
}

// docs/settings.md is generated from the settings tables; PERFTUNE_WRITE_SETTINGS=1 rewrites it.
TEST_CASE("docs/settings.md is what the settings tables say") {
  const std::string path = source_path("docs/settings.md");
  const std::string generated = settings_reference_markdown();
  if (std::getenv("PERFTUNE_WRITE_SETTINGS")) std::ofstream(path) << generated;
  CHECK(read_file(path) == generated);
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
