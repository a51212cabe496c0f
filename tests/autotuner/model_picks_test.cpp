// A collection's model picks are a tuner's first-round picks under that model: valid, distinct,
// never an anchor, best-scored first, the same on every call.
#include "autotuner/model_picks.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "autotuner/factories/model_factory.h"
#include "hardware/halide/halide_schedule.h"
#include "ir/input_error.h"
#include "ir/program_json.h"
#include "ir/random.h"
#include "search/strategy.h"
#include "test_support.h"

namespace perftune {
namespace {

CollectSpec collect_spec_with(const std::string& name, const std::string& model_picks) {
  const std::string dir = scratch_dir(name);
  std::ofstream(dir + "/collect.json") << R"({"output": "out.jsonl", "programs": [")" +
                                              source_path("configs/programs/mlp_block_tiny.json") + R"("], "model_picks": )" +
                                              model_picks + "}";
  return load_collect_spec(dir + "/collect.json");
}

TEST_CASE("model picks are the strategy's first round ranked by the model, anchors left out", "[autotuner][collect]") {
  // The analytical model over the shipped host spec: deterministic and torch-free.
  const CollectSpec collect = collect_spec_with("model_picks", R"({"per_kernel": 6, "seed": 3,
    "model": {"type": "analytical", "device": ")" + source_path("configs/hardware/host.json") + R"("},
    "strategy": {"type": "evolution", "population": 64, "generations": 2, "anchored": {"share": 0.5}}})");
  const ModelPicksSpec spec = parse_model_picks(collect);
  CHECK(spec.per_kernel == 6);
  CHECK(spec.seed == 3);
  CHECK(spec.model.type == "analytical");
  REQUIRE(spec.strategy.anchored);

  const Program program = load_program_file(source_path("configs/programs/matmul_1024.json"));
  const Kernel kernel(program.name(), program);
  const SearchSpace space = halide_schedule_space(kernel);
  const std::vector<Config> anchors = {unscheduled_config(space, kernel), heuristic_config(space, kernel)};
  const ProposeConfigs pick = make_model_picker(spec);
  const std::vector<Config> picks = pick(kernel, space, anchors, 6);
  REQUIRE(picks.size() == 6);
  CHECK(std::set<Config>(picks.begin(), picks.end()).size() == 6);
  for (const Config& c : picks) {
    CHECK(space.contains(c));
    CHECK(std::find(anchors.begin(), anchors.end(), c) == anchors.end());
  }
  const std::unique_ptr<CostModel> model = make_model(spec.model);
  const std::vector<float> scores = predict_scores(*model, kernel, space, picks);
  CHECK(std::is_sorted(scores.begin(), scores.end()));
  // Better than the median of random configs by the model's own estimate: it searched.
  Rng rng(1);
  std::vector<Config> random;
  for (int i = 0; i < 64; ++i) random.push_back(space.sample(rng));
  std::vector<float> random_scores = predict_scores(*model, kernel, space, random);
  std::sort(random_scores.begin(), random_scores.end());
  CHECK(scores.front() < random_scores[32]);
  CHECK(make_model_picker(spec)(kernel, space, anchors, 6) == picks);  // deterministic
}

TEST_CASE("bad model picks name the collect config and the field", "[autotuner][collect]") {
  const auto error = [](const std::string& section) {
    try {
      parse_model_picks(collect_spec_with("model_picks_bad", section));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error(R"({"per_kernel": 2, "model": {"type": "none"}, "strategy": {"type": "evolution"}})"),
             Catch::Contains("collect.json") && Catch::Contains("$.model_picks.model"));
  CHECK_THAT(error(R"({"per_kernel": 2, "model": {"type": "analytical"}, "strategy": {"type": "autoscheduler_sampling"}})"),
             Catch::Contains("$.model_picks.strategy.type"));
  CHECK_THAT(error(R"({"per_kernel": 2, "model": {"type": "analytical"}, "strategy": {"type": "evolution"}, "beam": 3})"),
             Catch::Contains("$.model_picks") && Catch::Contains("beam"));
}

}  // namespace
}  // namespace perftune
