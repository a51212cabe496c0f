#include "autotuner/network/network_tuner.h"

#include <filesystem>
#include <set>

#include <catch2/catch.hpp>

#include "autotuner/network_fake_backend.h"
#include "autotuner/network/network_tasks.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/record_log.h"
#include "test_support.h"

namespace perftune {
namespace {

using testing::dense_stack_campaign;
using testing::kDenseStack;
using testing::NetworkFakeBackend;
using testing::tune_on;

TEST_CASE("a network's identical kernels are one task, with every instance") {
  const NetworkPartition network = partition_network(load_network(source_path(kDenseStack)), kDenseStack);
  REQUIRE(network.plan.kernels.size() == 4);
  REQUIRE(network.tasks.size() == 2);
  CHECK(network.tasks[0].instances.size() == 3);
  CHECK(network.tasks[1].instances.size() == 1);
  CHECK(network.task_of_kernel == std::vector<std::size_t>{0, 0, 0, 1});
  // Each layer's dot, bias and ReLU are one kernel: the greedy partition fuses the elementwise ops.
  CHECK(network.plan.kernels[0].members.size() == 4);
  CHECK(network.tasks[0].space->contains(network.tasks[0].heuristic));
}

TEST_CASE("an op another kernel reads is written out by its own kernel, not fused into its users there") {
  const std::string file = "tests/fixtures/networks/shared_value.json";
  const NetworkPartition network = partition_network(load_network(source_path(file)), file);
  for (const FusedKernel& fused : network.plan.kernels) {
    CAPTURE(fused.kernel.name());
    for (OpId written : fused.outputs) {
      const auto users = network.program.users(written);
      for (OpId user : users) CHECK(network.plan.kernel_of_op[user] != network.plan.kernel_of_op[written]);
    }
  }
  // Greedy fusion alone would have fused the ReLU into its exponential, hiding it from the second dot.
  const Program& program = network.program;
  CHECK(network.plan.kernel_of_op[*program.find("act")] != network.plan.kernel_of_op[*program.find("grow")]);
  CHECK(network.plan.kernel_of_op[*program.find("act")] == network.plan.kernel_of_op[*program.find("mm")]);
}

TEST_CASE("a network is tuned under one budget, heuristics first, and resumes without measuring anything twice") {
  const std::string output = scratch_dir("network_tuner_resume");
  const NetworkPartition network = partition_network(load_network(source_path(kDenseStack)), kDenseStack);
  NetworkFakeBackend first;
  const auto summary = tune_on(dense_stack_campaign(10, output), first);
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
  const auto resumed = tune_on(dense_stack_campaign(14, output), second);
  CHECK(resumed["measurements"] == 14);
  CHECK(second.measured.size() == 4);
  for (const auto& config : second.measured) CHECK(first.measured.count(config) == 0);
  CHECK(RecordLog::load(output + "/records.jsonl").records.size() == 14);
  CHECK(resumed["rounds"].size() > rounds_before);  // the earlier rounds are kept
}

TEST_CASE("a kernel whose every schedule crashes is logged, keeps its heuristic, and the network run goes on") {
  const std::string output = scratch_dir("network_tuner_crash");
  const NetworkPartition network = partition_network(load_network(source_path(kDenseStack)), kDenseStack);
  NetworkFakeBackend fake;
  fake.crashing.insert(network.tasks[1].kernel.key());
  const auto summary = tune_on(dense_stack_campaign(12, output, "equal"), fake);
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
