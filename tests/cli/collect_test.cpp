// perftune collect and perftune remeasure through the real binary: each sitting that measures
// checks the machine once, beside its log; a sitting with nothing left to measure does not.
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_test_support.h"
#include "offline/machine_check.h"

namespace perftune {
namespace {

TEST_CASE("collect and remeasure check the machine before their first measurement, once a sitting", "[cli][halide]") {
  const std::string dir = scratch_dir("cli_collect_machine_check");
  const std::string config = dir + "/collect.json";
  std::ofstream(config) << nlohmann::json{
      {"output", dir + "/corpus.jsonl"},
      {"programs", {source_path("configs/programs/mlp_block_tiny.json")}},
      {"tile_configs_per_kernel", 2},
      {"fusion_variants_per_program", 0},
      {"program_fusion_configs", 0},
      {"cpu", {{"min_repeats", 3}, {"max_repeats", 3}, {"time_budget_seconds", 0.01}, {"parallel_guard_attempts", 0}}}}
      .dump();
  const auto collected = perftune_cli({"collect", config}, 300);
  CAPTURE(collected.err);
  REQUIRE(collected.ok());
  REQUIRE(collected.err.find("machine check before the collect: FMA ") != std::string::npos);
  const auto checks = read_machine_checks(dir + "/corpus.jsonl.machine_checks.jsonl");
  REQUIRE(checks.size() == 1);
  CHECK(checks[0]["phase"] == "collect");
  CHECK(checks[0]["fma_flops_one_core"].get<double>() > 1e8);
  // Everything recorded: the rerun measures nothing, so it checks nothing.
  REQUIRE(perftune_cli({"collect", config}, 300).ok());
  REQUIRE(read_machine_checks(dir + "/corpus.jsonl.machine_checks.jsonl").size() == 1);

  const auto remeasured = perftune_cli({"remeasure", config, "--output", dir + "/again.jsonl", "--spaces", "tile", "--rounds", "2"}, 300);
  CAPTURE(remeasured.err);
  REQUIRE(remeasured.ok());
  REQUIRE(read_machine_checks(dir + "/again.jsonl.machine_checks.jsonl").size() == 1);  // once for two rounds
  REQUIRE(perftune_cli({"remeasure", config, "--output", dir + "/again.jsonl", "--spaces", "tile", "--rounds", "2"}, 300).ok());
  REQUIRE(read_machine_checks(dir + "/again.jsonl.machine_checks.jsonl")[0]["phase"] == "remeasure");
  REQUIRE(read_machine_checks(dir + "/again.jsonl.machine_checks.jsonl").size() == 1);
}

}  // namespace
}  // namespace perftune
