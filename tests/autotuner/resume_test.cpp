// Kill-and-resume: a campaign interrupted at any point and resumed from its record log (with the
// replay backend and the same seed) ends exactly where an uninterrupted run ends.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "autotuner/tuner.h"
#include "hardware/replay/replay_backend.h"
#include "ir/record_log.h"
#include "search/small_strategies.h"
#include "search/toy_cost_model.h"
#include "test_support.h"

namespace perftune {
namespace {

const Config kTarget{{32, 4, 16}};

// Every config of a constrained 8x8x8 tile space recorded, with a deterministic jitter so that
// runtimes are distinct, a recorded cost, and a few compile errors.
Corpus recorded_corpus() {
  const SearchSpace full = testing::tile_space(8, [](const Config& c) { return c.values[0] * c.values[1] <= 2048; });
  const auto configs = full.enumerate();
  MeasuredKernel measured;
  measured.kernel = testing::toy_kernel();
  measured.space = std::make_shared<SearchSpace>(SearchSpace::recorded(full.knobs(), configs));
  measured.device = "TOY_GPU";
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const double jitter = 1.0 + 0.01 * static_cast<double>((i * 2654435761u) % 97) / 97.0;
    MeasureResult result = i % 23 == 5 ? MeasureResult::failure(MeasureStatus::kCompileError, "recorded failure", 0.5)
                                       : MeasureResult::from_repeats({testing::toy_seconds(configs[i], kTarget) * jitter}, 0.25 + 0.001 * i);
    measured.measurements.push_back(Measurement{configs[i], result});
  }
  Corpus corpus;
  corpus.path = "synthetic";
  corpus.kernels.push_back(std::move(measured));
  return corpus;
}

// Counts what the real backend measured, to check a resume measures only what is missing.
class CountingBackend : public Backend {
 public:
  CountingBackend(Backend& inner, int delay_ms = 0) : inner_(inner), delay_ms_(delay_ms) {}
  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) override {
    measured += configs.size();
    if (delay_ms_) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_ * configs.size()));
    return inner_.measure(kernel, space, configs);
  }
  std::string fingerprint() const override { return inner_.fingerprint(); }
  std::size_t measured = 0;

 private:
  Backend& inner_;
  int delay_ms_;
};

TunerOptions options() {
  TunerOptions o;
  o.max_measurements = 40;
  o.top_k = 6;
  o.epsilon = 0.2;
  o.seed = 77;
  return o;
}

struct Run {
  TuneResult result;
  std::size_t backend_measured = 0;
};

Run run(const Corpus& corpus, const std::string& strategy_name, const std::string& log_path, int delay_ms = 0) {
  const MeasuredKernel& kernel = corpus.kernels[0];
  ReplayBackend replay(corpus, "TOY_GPU");
  CountingBackend backend(replay, delay_ms);
  testing::ToyCostModel model(kTarget);
  auto strategy = testing::small_strategy(strategy_name);
  std::vector<Record> logged;
  if (std::filesystem::exists(log_path)) logged = RecordLog::load(log_path).records;
  RecordLog log(log_path);
  Tuner tuner(backend, *strategy, strategy->needs_model() ? &model : nullptr, &log, options());
  Run out{tuner.run(kernel.kernel, *kernel.space, logged), 0};
  out.backend_measured = backend.measured;
  return out;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void require_same(const TuneResult& resumed, const TuneResult& reference) {
  REQUIRE(resumed.history.size() == reference.history.size());
  for (std::size_t i = 0; i < reference.history.size(); ++i) {
    CAPTURE(i);
    const Measurement& a = resumed.history.entries()[i];
    const Measurement& b = reference.history.entries()[i];
    CHECK(a.config == b.config);
    CHECK(a.result.status == b.result.status);
    if (b.result.ok()) CHECK(a.result.seconds == b.result.seconds);
  }
  CHECK(resumed.best_after == reference.best_after);
  CHECK(resumed.hardware_seconds == Approx(reference.hardware_seconds).epsilon(1e-12));
  CHECK(resumed.rounds == reference.rounds);
}

TEST_CASE("a campaign cut off at any line of its log resumes to the same end") {
  const Corpus corpus = recorded_corpus();
  const std::string strategy = GENERATE(as<std::string>{}, "annealing", "evolution", "measured_annealing");
  const std::string dir = scratch_dir("resume_truncate_" + strategy);
  const Run reference = run(corpus, strategy, dir + "/reference.jsonl");
  REQUIRE(reference.result.history.size() == 40);
  REQUIRE(reference.backend_measured == 40);
  const auto reference_lines = lines_of(dir + "/reference.jsonl");
  REQUIRE(reference_lines.size() == 40);  // an opaque kernel: records only

  const std::size_t keep = GENERATE(0u, 1u, 5u, 6u, 17u, 39u, 40u);
  const bool torn = GENERATE(false, true);
  CAPTURE(strategy, keep, torn);
  const std::string path = dir + "/cut_" + std::to_string(keep) + (torn ? "_torn" : "") + ".jsonl";
  {
    std::ofstream out(path, std::ios::trunc);
    for (std::size_t i = 0; i < keep; ++i) out << reference_lines[i] << "\n";
    if (torn && keep < reference_lines.size()) out << reference_lines[keep].substr(0, reference_lines[keep].size() / 2);
  }
  const Run resumed = run(corpus, strategy, path);
  require_same(resumed.result, reference.result);
  CHECK(resumed.result.from_log == keep);
  CHECK(resumed.backend_measured == 40 - keep);
  const auto final_lines = lines_of(path);
  CHECK(final_lines.size() == 40);
  CHECK(RecordLog::load(path).records.size() == 40);
}

TEST_CASE("a campaign killed with SIGKILL resumes to the same end") {
  const Corpus corpus = recorded_corpus();
  const std::string dir = scratch_dir("resume_sigkill");
  const Run reference = run(corpus, "measured_annealing", dir + "/reference.jsonl");
  const std::string path = dir + "/killed.jsonl";

  // The child runs the campaign with a slowed backend (2 ms per config) so the kill lands mid-run.
  // It uses a model-free strategy: no thread pool is touched across fork().
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    try {
      run(corpus, "measured_annealing", path, 2);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  std::size_t seen = 0;
  for (int wait = 0; wait < 2000 && seen < 13; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seen = std::filesystem::exists(path) ? lines_of(path).size() : 0;
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  const std::size_t survived = RecordLog::load(path).records.size();
  CAPTURE(survived);
  CHECK(survived >= 13);
  CHECK(survived < 40);

  const Run resumed = run(corpus, "measured_annealing", path);
  require_same(resumed.result, reference.result);
  CHECK(resumed.result.from_log == survived);
  CHECK(resumed.backend_measured == 40 - survived);
  CHECK(RecordLog::load(path).records.size() == 40);
}

}  // namespace
}  // namespace perftune
