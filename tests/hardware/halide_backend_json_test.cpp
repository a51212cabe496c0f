// The Halide backend's options read from JSON: one reader serves a campaign's "cpu" backend and
// collect's "cpu" object, so a value one accepts the other must too, with the same checks.
#include "hardware/halide/halide_backend_json.h"

#include "ir/input_error.h"
#include "test_support.h"

namespace perftune {
namespace {

HalideBackendOptions read_options(const std::string& text) {
  HalideBackendOptions options;
  read_halide_backend_options(JsonView(nlohmann::json::parse(text), "backend.json", "$.cpu"), options);
  return options;
}

TEST_CASE("the Halide backend's options are read and unset keys keep their defaults", "[hardware][halide_json]") {
  const HalideBackendOptions defaults;
  const HalideBackendOptions options = read_options(
      R"({"threads": 0, "min_repeats": 3, "max_repeats": 10, "time_budget_seconds": 0.1, "parallel_guard_attempts": 0})");
  CHECK(options.threads == 0);
  CHECK(options.min_repeats == 3);
  CHECK(options.max_repeats == 10);
  CHECK(options.time_budget_seconds == 0.1);
  CHECK(options.parallel_guard_attempts == 0);
  CHECK(options.run_timeout_seconds == defaults.run_timeout_seconds);
  CHECK(options.target_cv == defaults.target_cv);
  CHECK(read_options("{}").parallel_guard_attempts == defaults.parallel_guard_attempts);
  // A campaign bounds its peers' searches: Adams2019 on a 3,000-op chain ran minutes per search.
  CHECK(read_options(R"({"autoschedule_timeout_seconds": 30})").autoschedule_timeout_seconds == 30);
  CHECK(read_options("{}").autoschedule_timeout_seconds == defaults.autoschedule_timeout_seconds);
}

TEST_CASE("a bad Halide backend option names the file and the key", "[hardware][halide_json]") {
  const auto fails_at = [](const std::string& text, const std::string& place) {
    CAPTURE(text);
    CHECK_THROWS_WITH(read_options(text), Catch::Contains("backend.json") && Catch::Contains(place));
  };
  fails_at(R"({"threads": -1})", "$.cpu.threads");
  fails_at(R"({"run_timeout_seconds": 0})", "$.cpu.run_timeout_seconds");  // 0 is not "no limit"
  fails_at(R"({"autoschedule_timeout_seconds": -1})", "$.cpu.autoschedule_timeout_seconds");
  fails_at(R"({"min_repeats": 0})", "$.cpu.min_repeats");
  fails_at(R"({"min_repeats": 8, "max_repeats": 4})", "$.cpu.max_repeats");
  fails_at(R"({"min_repeats": 40})", "$.cpu");  // above the default max_repeats: the object is named
  fails_at(R"({"target_cv": -0.1})", "$.cpu.target_cv");
  fails_at(R"({"time_budget_seconds": 0})", "$.cpu.time_budget_seconds");
  fails_at(R"({"parallel_guard_attempts": -2})", "$.cpu.parallel_guard_attempts");
}

}  // namespace
}  // namespace perftune
