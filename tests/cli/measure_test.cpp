// perftune measure through the real binary: exit codes, one-line errors, JSON output.
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "hardware/subprocess.h"
#include "test_support.h"

namespace perftune {
namespace {

SubprocessResult perftune_cli(std::vector<std::string> args) {
  const char* bin = std::getenv("PERFTUNE_BIN");
  args.insert(args.begin(), bin ? bin : std::string(PERFTUNE_BINARY_DIR) + "/perftune");
  return run_subprocess(args, "", 120);
}

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
  }));
  std::vector<std::string> command = {"measure", source_path("configs/programs/mlp_block_tiny.json")};
  command.insert(command.end(), args.begin(), args.end());
  const auto r = perftune_cli(command);
  CAPTURE(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find(words) != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
}

}  // namespace
}  // namespace perftune
