// The real-network study end to end through the real binary, at toy size: a training network and a
// held-out one collected live (kernels and blocks), a model trained on the first, both tasks scored
// on the second, with the split checked by the eval.
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace perftune {
namespace {

TEST_CASE("one small network collected, trained on and scored against a held-out one, both tasks", "[cli][halide]") {
  const std::string dir = scratch_dir("cli_network_study");
  const auto collect_config = [&](const std::string& side) {
    const std::string path = dir + "/" + side + ".json";
    std::ofstream(path) << nlohmann::json{
        {"output", dir + "/" + side + ".jsonl"},
        {"networks", {{"train", {source_path("configs/programs/mlp_block_small.json")}},
                      {"held_out", {source_path("configs/programs/mlp_block_tiny.json")}},
                      {"measure", side},
                      {"block_kernels", 2}}},
        {"tile_configs_per_kernel", 4},
        {"program_fusion_configs", 3},
        {"cpu", {{"min_repeats", 2}, {"max_repeats", 2}, {"time_budget_seconds", 0.01}, {"parallel_guard_attempts", 0}}}}
                                .dump();
    return path;
  };
  for (const std::string side : {"train", "held_out"}) {
    const auto collected = perftune_cli({"collect", collect_config(side), "--json"}, 300);
    CAPTURE(side, collected.err);
    REQUIRE(collected.ok());
    const nlohmann::json summary = nlohmann::json::parse(collected.out);
    CHECK(summary["failed"] == 0);
    CHECK(summary["measured"].get<int>() > 0);
  }
  std::ofstream(dir + "/eval.json") << nlohmann::json{
      {"sources", {dir + "/train.jsonl", dir + "/held_out.jsonl"}},
      {"split", {{"by", "device"}, {"test", {"held_out"}}, {"disjoint_from_test", {"train.jsonl"}}}},
      {"model", {{"hidden", 16}, {"opcode_embedding", 8}, {"min_opcode_count", 1}}},
      {"train", {{"epochs", 2}, {"steps_per_epoch", 5}, {"seed", 1}}},
      {"models", {"learned", "analytical", "random"}}}
                                           .dump();
  const auto evaluated = perftune_cli({"eval", dir + "/eval.json", "--json"}, 300);
  CAPTURE(evaluated.err);
  REQUIRE(evaluated.ok());
  const nlohmann::json result = nlohmann::json::parse(evaluated.out);
  for (const char* task : {"tile", "fusion"}) {
    CAPTURE(task);
    REQUIRE(result["tasks"].contains(task));
    CHECK(std::isfinite(result["tasks"][task]["learned"]["kendall_tau"].get<double>()));
    CHECK(std::isfinite(result["tasks"][task]["analytical"]["top1_slowdown"].get<double>()));
  }
}

}  // namespace
}  // namespace perftune
