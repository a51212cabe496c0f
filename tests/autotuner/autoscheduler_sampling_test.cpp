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
  REQUIRE(first.env.at("HL_BEAM_SIZE") == "50");
  REQUIRE(first.env.at("HL_RANDOM_DROPOUT") == "100");
  std::set<std::string> seeds;
  for (std::size_t i = 1; i < 4; ++i) {
    const AutoschedulerRun probe = autoscheduler_sample(options, 1, i);
    REQUIRE(probe.env.at("HL_BEAM_SIZE") == "1");
    REQUIRE(probe.env.at("HL_RANDOM_DROPOUT") == "90");
    seeds.insert(probe.env.at("HL_SEED"));
  }
  REQUIRE(seeds.size() == 3);
  REQUIRE(autoscheduler_sample(options, 1, 4).env.at("HL_BEAM_SIZE") == "50");  // the next batch
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
  HalideBackend backend(backend_options);
  std::size_t calls = 0;
  const auto results = sample_autoscheduler(backend, kernel, {}, 1, 3, [&](std::size_t, const MeasureResult&) { ++calls; });
  REQUIRE(calls == 3);
  for (const MeasureResult& r : results) {
    CAPTURE(r.message);
    REQUIRE(r.ok());
  }
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
