#include "autotuner/strategy_factory.h"

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

}  // namespace
}  // namespace perftune
