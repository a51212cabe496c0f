// Adams2019's sampling mode as a peer: the first sample of a batch is its beam search, the others
// are seeded random probes, each measured once on the Halide backend.
#include "autotuner/autoscheduler_sampling.h"

#include <set>

#include "ir/json_view.h"
#include "ir/program_json.h"
#include "test_support.h"

namespace perftune {
namespace {

TEST_CASE("autoscheduler samples follow the authors' autotuning loop", "[autotuner][halide]") {
  AutoschedulerSamplingOptions options;
  options.batch = 4;
  const AutoschedulerRun first = autoscheduler_sample(options, 1, 0);
  REQUIRE(first.name == "Adams2019");
  REQUIRE(first.env.at("HL_BEAM_SIZE") == "32");
  REQUIRE(first.env.at("HL_RANDOM_DROPOUT") == "100");
  std::set<std::string> seeds;
  for (std::size_t i = 1; i < 4; ++i) {
    const AutoschedulerRun probe = autoscheduler_sample(options, 1, i);
    REQUIRE(probe.env.at("HL_BEAM_SIZE") == "1");
    REQUIRE(probe.env.at("HL_RANDOM_DROPOUT") == "1");
    seeds.insert(probe.env.at("HL_SEED"));
  }
  REQUIRE(seeds.size() == 3);
  REQUIRE(autoscheduler_sample(options, 1, 4).env.at("HL_BEAM_SIZE") == "32");  // the next batch
  REQUIRE(autoscheduler_sample(options, 2, 1).env.at("HL_SEED") != autoscheduler_sample(options, 1, 1).env.at("HL_SEED"));
}

TEST_CASE("autoscheduler samples are measured on the Halide backend", "[autotuner][halide]") {
  const nlohmann::json json = nlohmann::json::parse(R"({"name": "mm", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [48, 32], "parameter_number": 0},
    {"name": "b", "opcode": "parameter", "shape": [32, 40], "parameter_number": 1},
    {"name": "y", "opcode": "dot", "shape": [48, 40], "operands": ["a", "b"], "dot": {"lhs_contracting": [1], "rhs_contracting": [0]}}]})");
  const Kernel kernel("mm", program_from_json(JsonView(json, "test")));
  HalideBackendOptions backend_options;
  backend_options.max_repeats = 3;
  backend_options.time_budget_seconds = 0.02;
  backend_options.parallel_guard_attempts = 0;
  HalideBackend backend(backend_options);
  AutoschedulerSamplingOptions options;
  options.batch = 4;
  std::size_t calls = 0;
  const auto samples = sample_autoscheduler(backend, kernel, options, 1, 8, [&](std::size_t, const AutoscheduledMeasurement&) { ++calls; });
  REQUIRE(calls == 8);
  std::set<std::string> probes;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    CAPTURE(i, samples[i].result.message);
    REQUIRE(samples[i].result.ok());
    REQUIRE(samples[i].schedule.size() == 16);
    if (i % 4 != 0) probes.insert(samples[i].schedule);
  }
  // The second batch's beam search is the first one's, reused and charged again.
  REQUIRE(samples[4].schedule == samples[0].schedule);
  REQUIRE(samples[4].result.cost_seconds == samples[0].result.cost_seconds);
  REQUIRE(probes.size() >= 2);
  // Each sample is searched as in a process of its own, whatever ran before it on the backend
  // (Adams2019 keeps the first dropout it reads for its process, and Halide renames a second
  // pipeline's functions): a probe alone on a new backend finds the same schedule.
  HalideBackend alone(backend_options);
  REQUIRE(alone.measure_autoscheduled(kernel, autoscheduler_sample(options, 1, 6)).schedule == samples[6].schedule);
}

TEST_CASE("autoscheduler sampling options are checked", "[autotuner][halide]") {
  const auto parse = [](const char* text) {
    const nlohmann::json json = nlohmann::json::parse(text);
    return parse_autoscheduler_sampling(JsonView(json, "c.json", "$.strategy"));
  };
  REQUIRE(parse(R"({"type": "autoscheduler_sampling", "batch": 8})").batch == 8);
  REQUIRE_THROWS_WITH(parse(R"({"type": "autoscheduler_sampling", "autoscheduler": "Li2018"})"), Catch::Matchers::Contains("Adams2019"));
  REQUIRE_THROWS_WITH(parse(R"({"type": "autoscheduler_sampling", "dropout": 120})"), Catch::Matchers::Contains("1..100"));
}

}  // namespace
}  // namespace perftune
