#include "hardware/replay/replay_backend.h"

#include <cmath>

#include <catch2/catch.hpp>

#include "ir/record_log.h"
#include "ir/source.h"
#include "test_support.h"

namespace perftune {
namespace {

MeasureResult recorded(double seconds, double cost) {
  MeasureResult result = MeasureResult::from_repeats({seconds * 0.99, seconds, seconds * 1.02}, cost);
  return result;
}

// One kernel over a 4x4 product space on two devices; only some configs were measured.
Corpus small_corpus() {
  Corpus corpus;
  corpus.path = "synthetic";
  auto space = std::make_shared<SearchSpace>(std::vector<Knob>{{"a", {1, 2, 4, 8}}, {"b", {1, 2, 4, 8}}});
  MeasuredKernel gpu;
  gpu.kernel = Kernel::opaque("gemm", "00000000000000a1");
  gpu.space = space;
  gpu.device = "TITAN_RTX";
  gpu.measurements = {{Config{{1, 1}}, recorded(2e-3, 0.5)},
                      {Config{{2, 4}}, recorded(1e-3, 0.25)},
                      {Config{{8, 8}}, MeasureResult::failure(MeasureStatus::kCompileError, "too many registers", 0.125)},
                      {Config{{4, 4}}, recorded(3e-3, 0.0)}};  // no recorded cost: the cost model charges it
  MeasuredKernel other = gpu;
  other.device = "A100";
  other.measurements = {{Config{{1, 1}}, recorded(9e-3, 1.0)}};
  corpus.kernels = {gpu, other};
  return corpus;
}

TEST_CASE("replay returns exactly the recorded times and costs") {
  const Corpus corpus = small_corpus();
  ReplayBackend backend(corpus, "TITAN_RTX", ReplayCost{0.5, 10.0});
  CHECK(backend.fingerprint() == "replay:TITAN_RTX");
  const MeasuredKernel& truth = corpus.kernels[0];
  std::vector<Config> configs;
  for (const auto& m : truth.measurements) configs.push_back(m.config);
  const auto results = backend.measure(truth.kernel, *truth.space, configs);
  REQUIRE(results.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const MeasureResult& want = truth.measurements[i].result;
    CHECK(results[i].status == want.status);
    CHECK(results[i].cost_seconds == want.cost_seconds);
    if (want.ok()) {
      CHECK(results[i].seconds == want.seconds);  // bit for bit: replay never rounds or guesses
      CHECK(results[i].repeats == want.repeats);
    }
  }
  CHECK(results[2].message == "too many registers");
  // Recorded without a cost: 0.5 s per measurement + 10 x the 3 ms runtime.
  CHECK(results[3].seconds == 3e-3);
  CHECK(results[3].cost_seconds == Approx(0.53));
}

TEST_CASE("replay reports not_recorded and invalid_config instead of guessing") {
  const Corpus corpus = small_corpus();
  ReplayBackend backend(corpus, "TITAN_RTX");
  const MeasuredKernel& truth = corpus.kernels[0];
  const std::vector<Config> configs{Config{{2, 2}}, Config{{3, 2}}, Config{{1, 1}}};
  const auto results = backend.measure(truth.kernel, *truth.space, configs);
  CHECK(results[0].status == MeasureStatus::kNotRecorded);
  CHECK(std::isnan(results[0].seconds));
  CHECK(results[0].message.find("never measured on TITAN_RTX") != std::string::npos);
  CHECK(results[1].status == MeasureStatus::kInvalidConfig);
  CHECK(results[2].ok());
  const auto unknown = backend.measure(Kernel::opaque("other", "00000000000000ff"), *truth.space, {&configs[2], 1});
  CHECK(unknown[0].status == MeasureStatus::kNotRecorded);
}

TEST_CASE("replay chooses one device and names the choices when it cannot") {
  const Corpus corpus = small_corpus();
  CHECK_THROWS_WITH(ReplayBackend(corpus, ""), Catch::Contains("2 devices") && Catch::Contains("'A100'"));
  CHECK_THROWS_WITH(ReplayBackend(corpus, "V100"), Catch::Contains("no measurements from device 'V100'"));
  ReplayBackend a100(corpus, "A100");
  const auto result = a100.measure(corpus.kernels[1].kernel, *corpus.kernels[1].space, std::vector<Config>{Config{{1, 1}}});
  CHECK(result[0].seconds == corpus.kernels[1].measurements[0].result.seconds);
}

TEST_CASE("replay of a record log returns what was logged") {
  const std::string dir = scratch_dir("replay_backend_log");
  const std::string path = dir + "/source.jsonl";
  const Corpus corpus = small_corpus();
  {
    RecordLog log(path);
    for (const auto& m : corpus.kernels[0].measurements)
      log.append(Record{"cpu:test", "00000000000000a1", "gemm", {"a", "b"}, m.config, m.result, 0.0});
  }
  const Corpus loaded = load_source(path);
  ReplayBackend backend(loaded, "");
  CHECK(backend.fingerprint() == "replay:cpu:test");
  const MeasuredKernel& kernel = loaded.kernels.at(0);
  const auto results = backend.measure(kernel.kernel, *kernel.space, std::vector<Config>{Config{{2, 4}}, Config{{8, 8}}});
  CHECK(results[0].seconds == corpus.kernels[0].measurements[1].result.seconds);
  CHECK(results[0].cost_seconds == 0.25);
  CHECK(results[1].status == MeasureStatus::kCompileError);
  CHECK(results[1].cost_seconds == 0.125);
}

}  // namespace
}  // namespace perftune
