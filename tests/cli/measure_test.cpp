// perftune measure through the real binary: exit codes, one-line errors, JSON output.
#include <nlohmann/json.hpp>

#include "cli_test_support.h"

namespace perftune {
namespace {

TEST_CASE("measure prints one JSON result per config and exits 0", "[cli][measure]") {
  const auto r = perftune_cli({"measure", source_path("configs/programs/mlp_block_tiny.json"), "--kernel", "mm1", "--random", "2", "--json"});
  CAPTURE(r.err);
  REQUIRE(r.ok());
  const auto json = nlohmann::json::parse(r.out);
  REQUIRE(json["results"].size() == 2);
  for (const auto& result : json["results"]) {
    CHECK(result["status"] == "ok");
    CHECK(result["seconds"].get<double>() > 0);
    CHECK(result["config"].contains("tile.red"));
  }
}

TEST_CASE("measure fails with one line naming the problem", "[cli][measure]") {
  const auto [args, words] = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--kernel", "nope"}, "no kernel 'nope'"},
      {{"--fusion", "[999]"}, "--fusion"},
      {{"--kernel", "mm1", "--config", "{\"tile.out.0\": 3}"}, "--config"},
      {{"--kernel", "mm1", "--runner", "true", "--runner-timeout", "0"}, "--runner-timeout: a timeout must be above 0"},
      {{"--kernel", "mm1", "--autoscheduler", "Nope"}, "--autoscheduler"},
      {{"--kernel", "mm1", "--autoscheduler", "Li2018", "--runner", "true"}, "not through --runner"},
  }));
  std::vector<std::string> command = {"measure", source_path("configs/programs/mlp_block_tiny.json")};
  command.insert(command.end(), args.begin(), args.end());
  const auto r = perftune_cli(command);
  CAPTURE(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find(words) != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

TEST_CASE("measure --autoscheduler times the kernel as Adams2019 schedules it, at its better machine parameters", "[cli][measure]") {
  const auto r = perftune_cli({"measure", source_path("configs/programs/mlp_block_tiny.json"), "--as-kernel", "--autoscheduler", "Adams2019", "--json"});
  CAPTURE(r.err);
  REQUIRE(r.ok());
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["autoscheduler"] == "Adams2019");
  CHECK(json["status"] == "ok");
  CHECK(json["seconds"].get<double>() > 0);
  CHECK(json["settings"].get<std::string>().find("machine ") == 0);
}

TEST_CASE("measure --runner exits non-zero when every result failed, after printing them", "[cli][measure]") {
  const auto r = perftune_cli({"measure", source_path("configs/programs/mlp_block_tiny.json"), "--kernel", "mm1", "--random", "2",
                               "--runner", "cat >/dev/null; echo 'no device here'", "--runner-timeout", "30"});
  CAPTURE(r.out, r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("runtime_error") != std::string::npos);  // each failure is still shown
  CHECK(r.err.find("every measurement failed (2 of 2); the first: runtime_error") != std::string::npos);  // and why, on one line
}

}  // namespace
}  // namespace perftune
