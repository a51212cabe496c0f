#include "autotuner/network/network_tuner.h"

#include <filesystem>
#include <set>

#include <catch2/catch.hpp>

#include "autotuner/network/network_tasks.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/record_log.h"
#include "test_support.h"

namespace perftune {
namespace {

const std::string kNetwork = "tests/fixtures/networks/dense_stack.json";  // 4 kernels, 2 distinct

// A fake device: scripted times (a config's knob values set its time), and every config of the
// kernels named in `crashing` fails.
class NetworkFakeBackend : public Backend {
 public:
  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace&, std::span<const Config> configs) override {
    std::vector<MeasureResult> results;
    for (const Config& config : configs) {
      measured.insert({kernel.key(), config.to_string()});
      if (crashing.count(kernel.key())) {
        results.push_back(MeasureResult::failure(MeasureStatus::kRuntimeError, "scripted crash", 0.1));
        continue;
      }
      double seconds = 1e-3;
      for (std::int64_t v : config.values) seconds += 1e-6 * static_cast<double>(v % 7);
      results.push_back(MeasureResult::from_repeats({seconds}, 0.1));
    }
    return results;
  }
  std::string fingerprint() const override { return "fake:network"; }

  std::set<std::string> crashing;
  std::set<std::pair<std::string, std::string>> measured;
};

Campaign network_campaign(std::size_t measurements, const std::string& output, const std::string& allocation = "gradient") {
  const nlohmann::json json = {{"source", {{"network", source_path(kNetwork)}}},
                               {"backend", {{"type", "cpu"}}},
                               {"model", {{"type", "none"}}},
                               {"strategy", {{"type", "random"}}},
                               {"budget", {{"measurements", measurements}}},
                               {"allocation", allocation},
                               {"top_k", 3},
                               {"seed", 5},
                               {"output", output}};
  return parse_campaign(json, "network_campaign.json");
}

// Runs the campaign on `fake` (the campaign's own device backend is built, then set aside).
nlohmann::ordered_json tune_on(const Campaign& campaign, NetworkFakeBackend& fake) {
  NetworkTuneOptions options;
  options.wrap_device = [&fake](std::unique_ptr<Backend>) -> std::unique_ptr<Backend> {
    struct Borrowed : Backend {
      explicit Borrowed(Backend& inner) : inner(inner) {}
      std::vector<MeasureResult> measure(const Kernel& k, const SearchSpace& s, std::span<const Config> c) override {
        return inner.measure(k, s, c);
      }
      std::string fingerprint() const override { return inner.fingerprint(); }
      Backend& inner;
    };
    return std::make_unique<Borrowed>(fake);
  };
  return tune_network(campaign, options);
}

TEST_CASE("a network's identical kernels are one task, with every instance") {
  const NetworkPartition network = partition_network(load_network(source_path(kNetwork)), kNetwork);
  REQUIRE(network.plan.kernels.size() == 4);
  REQUIRE(network.tasks.size() == 2);
  CHECK(network.tasks[0].instances.size() == 3);
  CHECK(network.tasks[1].instances.size() == 1);
  CHECK(network.task_of_kernel == std::vector<std::size_t>{0, 0, 0, 1});
  // Each layer's dot, bias and ReLU are one kernel: the greedy partition fuses the elementwise ops.
  CHECK(network.plan.kernels[0].members.size() == 4);
  CHECK(network.tasks[0].space->contains(network.tasks[0].heuristic));
}

TEST_CASE("a network is tuned under one budget, heuristics first, and resumes without measuring anything twice") {
  const std::string output = scratch_dir("network_tuner_resume");
  const NetworkPartition network = partition_network(load_network(source_path(kNetwork)), kNetwork);
  NetworkFakeBackend first;
  const auto summary = tune_on(network_campaign(10, output), first);
  CHECK(summary["measurements"] == 10);
  CHECK(first.measured.size() == 10);  // confirmations of new bests measure a config again, not a new one
  CHECK(summary["stop_reason"] == "budget");
  CHECK(summary["tasks"] == 2);
  CHECK(summary["kernels"] == 4);
  for (const NetworkTask& task : network.tasks)
    CHECK(first.measured.count({task.kernel.key(), task.heuristic.to_string()}) == 1);
  // The estimate is each kernel's best times its instances.
  const auto& tasks = summary["task_list"];
  const double expected = 3 * tasks[0]["best_seconds"].get<double>() + tasks[1]["best_seconds"].get<double>();
  CHECK(summary["latency_seconds"].get<double>() == Approx(expected));
  CHECK(summary["latency_seconds"].get<double>() <= summary["heuristic_latency_seconds"].get<double>());
  const auto written = nlohmann::json::parse(read_file(output + "/network.json"));
  CHECK(written["measurements"] == 10);
  const std::size_t rounds_before = written["rounds"].size();
  REQUIRE(rounds_before >= 3);

  NetworkFakeBackend second;
  const auto resumed = tune_on(network_campaign(14, output), second);
  CHECK(resumed["measurements"] == 14);
  CHECK(second.measured.size() == 4);
  for (const auto& config : second.measured) CHECK(first.measured.count(config) == 0);
  CHECK(RecordLog::load(output + "/records.jsonl").records.size() == 14);
  CHECK(resumed["rounds"].size() > rounds_before);  // the earlier rounds are kept
}

TEST_CASE("a kernel whose every schedule crashes is logged, keeps its heuristic, and the network run goes on") {
  const std::string output = scratch_dir("network_tuner_crash");
  const NetworkPartition network = partition_network(load_network(source_path(kNetwork)), kNetwork);
  NetworkFakeBackend fake;
  fake.crashing.insert(network.tasks[1].kernel.key());
  const auto summary = tune_on(network_campaign(12, output, "equal"), fake);
  CHECK(summary["stop_reason"] == "budget");
  CHECK(summary["measurements"] == 12);
  CHECK(summary["latency_seconds"].is_null());
  REQUIRE(summary["untimed"].size() == 1);
  CHECK(summary["untimed"][0] == network.tasks[1].kernel.name());
  CHECK(summary["task_list"][1]["failed"].get<int>() >= 1);
  CHECK(summary["task_list"][1]["finished"] == true);  // its budget went to the kernel that runs
  CHECK(summary["task_list"][0]["best_seconds"].is_number());
  std::size_t failures = 0;
  for (const Record& record : RecordLog::load(output + "/records.jsonl").records) failures += record.result.ok() ? 0 : 1;
  CHECK(failures == summary["failed"].get<std::size_t>());
}

TEST_CASE("a network campaign's own settings are refused elsewhere, and bad values name their place") {
  auto parse = [](nlohmann::json json) { return parse_campaign(json, "c.json"); };
  nlohmann::json program = {{"source", {{"program", "p.json"}, {"kernel", "fusion"}}}, {"backend", {{"type", "cpu"}}},
                            {"strategy", {{"type", "random"}}}, {"budget", {{"minutes", 5}}}};
  CHECK_THROWS_WITH(parse(program), Catch::Contains("$.budget.minutes") && Catch::Contains("network source"));
  program["budget"] = {{"measurements", 5}};
  program["allocation"] = "equal";
  CHECK_THROWS_WITH(parse(program), Catch::Contains("$.allocation"));
  nlohmann::json network = {{"source", {{"network", "n.onnx"}}}, {"backend", {{"type", "cpu"}}},
                            {"strategy", {{"type", "random"}}}, {"budget", {{"minutes", 2}}}, {"allocation", "fair"}};
  CHECK_THROWS_WITH(parse(network), Catch::Contains("$.allocation") && Catch::Contains("round robin"));
  network.erase("allocation");
  CHECK(parse(network).max_tuning_seconds == Approx(120));
  network["source"]["kernel"] = "x";
  CHECK_THROWS_WITH(parse(network), Catch::Contains("$.source.kernel"));
  network["source"] = {{"network", "missing.onnx"}};
  CHECK_THROWS_WITH(tune_network(parse(network)), Catch::Contains("missing.onnx") && Catch::Contains("does not exist"));
}

}  // namespace
}  // namespace perftune
