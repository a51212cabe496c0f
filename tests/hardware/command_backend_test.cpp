// The command backend measures through a runner over the JSON protocol, splits a batch over a
// pool, and survives a runner that exits early, prints garbage or hangs.
#include "hardware/command/command_backend.h"

#include <chrono>

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

// A result that parses as a failure naming `words`: one bad result fails only itself.
void check_bad_result(const std::string& result, const std::string& words) {
  CAPTURE(result);
  const auto parsed = parse_runner_response(R"({"results": [)" + result + "]}", 1, "r", 0.25);
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0].status == MeasureStatus::kRuntimeError);
  CHECK(parsed[0].cost_seconds == 0.25);
  CAPTURE(parsed[0].message);
  CHECK(parsed[0].message.find("r: $.results[0]") != std::string::npos);
  CHECK(parsed[0].message.find(words) != std::string::npos);
}

TEST_CASE("runner responses are validated field by field", "[hardware][command]") {
  check_bad_result(R"({"status": "fast"})", "a status");
  check_bad_result(R"({"status": "ok", "seconds": -1})", "negative");
  check_bad_result(R"({"status": "ok", "seconds": 0})", "0 s");  // the protocol says seconds > 0
  check_bad_result(R"({"status": "ok", "repeats": [1e-3, 0]})", "0 s");
  check_bad_result(R"({"status": "ok"})", "seconds");
  check_bad_result(R"({"status": "ok", "seconds": 1, "cost": 1e300})", "more than a week");
  check_bad_result(R"({"status": "ok", "seconds": 1, "colour": 2})", "colour");
  // The reply as a whole: unusable, so the caller fails the share.
  CHECK_THROWS_AS(parse_runner_response(R"({"results": []})", 1, "r"), InputError);
  CHECK_THROWS_WITH(parse_runner_response(R"({"results": [{"status": "ok", "seconds": NaN}]})", 1, "r"), Catch::Contains("NaN"));
  CHECK_THROWS_WITH(parse_runner_response(R"({"results": [], "results": [{"status": "ok", "seconds": 1}]})", 1, "r"),
                    Catch::Contains("appears twice"));
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

TEST_CASE("one bad value in a reply fails only its own result", "[hardware][command]") {
  const SearchSpace space = tile_space();
  const std::vector<Config> configs = {{{1, 1, 1}}, {{2, 4, 1}}, {{8, 8, 4}}, {{4, 2, 2}}, {{1, 8, 4}}, {{2, 2, 2}}};
  const std::string reply = R"({"results": [{"status": "ok", "seconds": 1e-3}, {"status": "ok", "seconds": 0},
    {"status": "ok", "seconds": 2e-3}, {"status": "ok", "seconds": 3e-3, "cost": 1e300},
    {"status": "compile_error", "message": "too big"}, {"status": "ok", "seconds": 4e-3}]})";
  CommandBackend backend({{"cat >/dev/null; printf '%s' '" + reply + "'"}, "fake", 10});
  const auto results = backend.measure(matmul_kernel(), space, configs);
  REQUIRE(results.size() == 6);
  CHECK(results[0].ok());
  CHECK(results[1].status == MeasureStatus::kRuntimeError);
  CHECK(results[2].ok());
  CHECK(results[3].status == MeasureStatus::kRuntimeError);
  CHECK(results[4].status == MeasureStatus::kCompileError);
  CHECK(results[5].ok());
}

TEST_CASE("hostile runners: a flood, a stray child, garbage after a long run, no timeout", "[hardware][command]") {
  const SearchSpace space = tile_space();
  const std::vector<Config> configs = {{{1, 1, 1}}, {{2, 4, 1}}};
  SECTION("a runner flooding stdout fails its share at the reply limit, well within its timeout") {
    CommandBackend backend({{"yes"}, "fake", 2.0});
    const auto start = std::chrono::steady_clock::now();
    const auto results = backend.measure(matmul_kernel(), space, configs);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(wall < 2.2);
    CHECK(results[0].status == MeasureStatus::kRuntimeError);
    CHECK(results[0].message.find("more than 4194304 bytes on stdout") != std::string::npos);
  }
  SECTION("a runner that answers and leaves a child holding stdout keeps its answer") {
    const std::string reply = R"({"results": [{"status": "ok", "seconds": 1e-3}, {"status": "ok", "seconds": 2e-3}]})";
    CommandBackend backend({{"cat >/dev/null; printf '%s' '" + reply + "'; sleep 19.5 &"}, "fake", 10.0});
    const auto start = std::chrono::steady_clock::now();
    const auto results = backend.measure(matmul_kernel(), space, configs);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 2.0);
    CAPTURE(results[0].message);
    CHECK(results[0].ok());
    CHECK(results[1].seconds == 2e-3);
  }
  SECTION("an unparsable reply is charged the time the runner ran") {
    CommandBackend backend({{"cat >/dev/null; sleep 0.4; echo 'not json'"}, "fake", 10.0});
    const auto results = backend.measure(matmul_kernel(), space, configs);
    CHECK(results[0].status == MeasureStatus::kRuntimeError);
    CHECK(results[0].cost_seconds + results[1].cost_seconds >= 0.4);
  }
  SECTION("a timeout of 0 is rejected, not taken as no limit") {
    CHECK_THROWS_WITH(CommandBackend({{"true"}, "fake", 0.0}), Catch::Contains("timeout") && Catch::Contains("above 0"));
  }
}

}  // namespace
}  // namespace perftune
