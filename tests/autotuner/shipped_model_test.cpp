// The shipped model (models/halide_cpu.json) against this build: a feature-schema change that
// does not retrain it (scripts/train_shipped_model) fails here.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

#include "autotuner/campaign/campaign.h"
#include "autotuner/factories/model_factory.h"
#include "hardware/halide/fusion_space.h"
#include "hardware/halide/halide_schedule.h"
#include "ir/input_error.h"
#include "ir/program_json.h"
#include "test_support.h"

namespace perftune {
namespace {

ModelSpec shipped_spec() {
  const nlohmann::json json = nlohmann::json::parse(R"({"type": "learned"})");
  return parse_model_spec(JsonView(json, "campaign.json", "$.model"), [](const std::string& path) { return path; });
}

// Predicted log seconds of `first` and 15 sampled configs.
std::vector<float> predictions(CostModel& model, const Kernel& kernel, const SearchSpace& space, const Config& first) {
  std::vector<Config> configs{first};
  Rng rng(7);
  for (int i = 0; i < 15; ++i) configs.push_back(space.sample(rng));
  std::vector<float> predicted(configs.size());
  model.predict(kernel, space, configs, predicted);
  return predicted;
}

void require_a_ranking(const std::vector<float>& predicted) {
  CAPTURE(predicted);
  for (float p : predicted) REQUIRE(std::isfinite(p));
  REQUIRE(std::set<float>(predicted.begin(), predicted.end()).size() > 1);  // it tells configs apart
}

TEST_CASE("the shipped model loads with this build and ranks a kernel's schedules and a program's placements") {
  const ModelSpec spec = shipped_spec();
  REQUIRE(spec.shipped);
  if (const char* env = std::getenv("PERFTUNE_MODEL"); !env || !*env)
    REQUIRE(spec.checkpoint == source_path("models/halide_cpu.json"));
  const std::unique_ptr<CostModel> model = make_model(spec, "cpu");
  REQUIRE(model != nullptr);

  const Program matmul = load_program_file(source_path("configs/programs/matmul_1024.json"));
  const Kernel kernel("matmul_1024", matmul);
  const SearchSpace schedules = halide_schedule_space(kernel);
  const std::vector<float> scheduled = predictions(*model, kernel, schedules, heuristic_config(schedules, kernel));
  require_a_ranking(scheduled);
  // A 1024^3 matmul takes milliseconds on any CPU: its predicted time must be of that order.
  CHECK(std::exp(scheduled[0]) > 1e-4);
  CHECK(std::exp(scheduled[0]) < 1.0);

  const Program block = load_program_file(source_path("configs/programs/mlp_block_small.json"));
  const Kernel whole("mlp_block_small", block);
  const SearchSpace placements = fusion_space(block, FusionChoices::kPlacements);
  Rng rng(1);
  require_a_ranking(predictions(*model, whole, placements, placements.sample(rng)));
}

TEST_CASE("the shipped model of another feature schema names the command that retrains it") {
  const std::string dir = scratch_dir("shipped_model_schema");
  nlohmann::json checkpoint = nlohmann::json::parse(std::ifstream(source_path("models/halide_cpu.json")));
  checkpoint["feature_schema_version"] = checkpoint["feature_schema_version"].get<int>() + 1;
  std::ofstream(dir + "/halide_cpu.json") << checkpoint.dump();
  std::filesystem::copy_file(source_path("models/" + checkpoint["weights"].get<std::string>()),
                             dir + "/" + checkpoint["weights"].get<std::string>());
  ::setenv("PERFTUNE_MODEL", (dir + "/halide_cpu.json").c_str(), 1);
  const ModelSpec spec = shipped_spec();
  ::unsetenv("PERFTUNE_MODEL");
  CHECK_THROWS_AS(make_model(spec, "cpu"), InputError);
  CHECK_THROWS_WITH(make_model(spec, "cpu"), Catch::Contains("halide_cpu.json") && Catch::Contains("feature_schema_version") &&
                                                 Catch::Contains("scripts/train_shipped_model"));
}

TEST_CASE("the shipped model is refused for a campaign whose backend is not the CPU") {
  const std::string dir = scratch_dir("shipped_model_replay");
  std::ofstream(dir + "/campaign.json") << R"({"name": "c", "source": {"path": "r.jsonl"}, "backend": {"type": "replay"},
    "model": {"type": "learned"}, "strategy": {"type": "random"}, "budget": {"measurements": 4}})";
  CHECK_THROWS_WITH(load_campaign(dir + "/campaign.json"),
                    Catch::Contains("campaign.json: $.model") && Catch::Contains("shipped model") && Catch::Contains("\"replay\""));
}

}  // namespace
}  // namespace perftune
