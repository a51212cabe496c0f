// The command backend measures through a runner over the JSON protocol, splits a batch over a
// pool, and survives a runner that exits early, prints garbage or hangs.
#include "hardware/command_backend.h"

#include "hardware_test_support.h"
#include "ir/input_error.h"

namespace perftune {
namespace {

std::string runner(const std::string& mode) {
  return "python3 " + std::string(PERFTUNE_TEST_DIR) + "/fixtures/runners/fake_runner.py " + mode;
}

const Kernel& matmul_kernel() {
  static const Kernel kernel("mm", program_from_text(R"({"name": "mm", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [8, 4], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [4, 8], "parameter_number": 1},
    {"name": "y", "opcode": "dot", "operands": ["a", "b"], "shape": [8, 8], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})"));
  return kernel;
}

// The runner protocol does not care which backend's knobs it carries: a plain tile space.
SearchSpace tile_space() {
  return SearchSpace({{"tile.out.0", {1, 2, 4, 8}}, {"tile.out.1", {1, 2, 4, 8}}, {"tile.red", {1, 2, 4}}});
}

TEST_CASE("a pool of runners measures a batch in parallel shares", "[hardware][command]") {
  const SearchSpace space = tile_space();
  const std::vector<Config> configs = {{{1, 1, 1}}, {{2, 4, 1}}, {{8, 8, 4}}, {{4, 2, 2}}, {{1, 8, 4}}};
  CommandBackend backend({{runner("ok"), runner("ok")}, "fake", 30});
  const auto results = backend.measure(matmul_kernel(), space, configs);
  REQUIRE(results.size() == configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(i, results[i].message);
    REQUIRE(results[i].ok());
    double sum = 0;
    for (auto v : configs[i].values) sum += static_cast<double>(v);
    CHECK(results[i].seconds == Approx(1e-6 * (1 + sum)));  // each result matches its own config
    CHECK(results[i].cost_seconds == 0.5);
  }
  CHECK(backend.fingerprint() == "command:fake");
}

TEST_CASE("a failing runner fails its share with a clear message, the rest goes on", "[hardware][command]") {
  const SearchSpace space = tile_space();
  const std::vector<Config> configs = {{{1, 1, 1}}, {{2, 4, 1}}};
  const auto [mode, status, words] = GENERATE(table<std::string, MeasureStatus, std::string>({
      {"early", MeasureStatus::kRuntimeError, "exit code 3"},
      {"garbage", MeasureStatus::kRuntimeError, "stdout"},
      {"hang", MeasureStatus::kTimeout, "timed out"},
      {"short", MeasureStatus::kRuntimeError, "one per config (got 0)"},
  }));
  CAPTURE(mode);
  // The timeout bounds the "hang" case; it leaves room for Python's start-up on a loaded machine.
  CommandBackend backend({{runner("ok"), runner(mode)}, "fake", 5.0});
  const auto results = backend.measure(matmul_kernel(), space, configs);
  REQUIRE(results.size() == 2);
  CHECK(results[0].ok());  // the healthy runner's share
  CHECK(status_name(results[1].status) == status_name(status));
  CAPTURE(results[1].message);
  CHECK(results[1].message.find(words) != std::string::npos);
  CHECK(results[1].message.find("runner 1") != std::string::npos);
}

TEST_CASE("runner responses are validated field by field", "[hardware][command]") {
  CHECK_THROWS_AS(parse_runner_response(R"({"results": [{"status": "fast"}]})", 1, "r"), InputError);
  CHECK_THROWS_AS(parse_runner_response(R"({"results": [{"status": "ok", "seconds": -1}]})", 1, "r"), InputError);
  CHECK_THROWS_AS(parse_runner_response(R"({"results": [{"status": "ok"}]})", 1, "r"), InputError);
  CHECK_THROWS_WITH(parse_runner_response(R"({"results": [{"status": "ok", "seconds": 1, "colour": 2}]})", 1, "r"),
                    Catch::Contains("colour"));
  const auto ok = parse_runner_response(R"({"results": [{"status": "timeout", "cost": 2, "message": "slow"},
                                                        {"status": "ok", "seconds": 2e-3, "repeats": [1e-3, 2e-3, 3e-3]}]})", 2, "r");
  CHECK(ok[0].status == MeasureStatus::kTimeout);
  CHECK(ok[0].message == "slow");
  CHECK(ok[1].seconds == 2e-3);
  CHECK(ok[1].repeats.size() == 3);
  // The request carries the kernel's program, so a remote runner can rebuild it.
  const SearchSpace space = tile_space();
  const std::vector<Config> configs = {{{1, 1, 1}}};
  const auto request = nlohmann::json::parse(runner_request(matmul_kernel(), space, configs));
  CHECK(request["kernel"]["key"] == matmul_kernel().key());
  CHECK(request["configs"][0]["tile.red"] == 1);
  CHECK(request["kernel"]["program"]["ops"].size() == 3);
}

}  // namespace
}  // namespace perftune
