// An experiment divided among ranks (mpirun -n N): each rank runs the runs it owns, rank 0 reads
// the others' from the shared output folder and writes the same results as one process. The ranks
// are played here one after the other, without MPI (tests/hardening runs the real mpirun).
#include <catch2/catch.hpp>

#include <filesystem>

#include "distributed/ranks.h"
#include "experiments/experiment.h"
#include "experiments/experiment_runner.h"
#include "ir/file_io.h"
#include "test_support.h"
#include "experiment_fixtures.h"

using namespace perftune;
namespace fs = std::filesystem;

namespace {

// Rank `rank` of `size`, the others' part of every sum given.
class PlayedRanks final : public Ranks {
 public:
  PlayedRanks(int rank, int size, std::uint64_t others_sum = 0) : rank_(rank), size_(size), others_sum_(others_sum) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void barrier() override {}
  std::uint64_t sum(std::uint64_t value) override { return value + others_sum_; }
  std::string broadcast(const std::string& value) override { return value; }
  void send(int, const std::string&) override { throw std::logic_error("an experiment sends no messages"); }
  std::string receive(int) override { throw std::logic_error("an experiment receives no messages"); }
  [[noreturn]] void abort(int code) override { throw std::runtime_error("aborted with " + std::to_string(code)); }

 private:
  int rank_, size_;
  std::uint64_t others_sum_;
};

nlohmann::json toy_experiment(const std::string& cache_path) {
  return {{"name", "toy"},
          {"spaces", {{{"name", "toy/gpu"}, {"source", {{"path", cache_path}}}}}},
          {"strategies", {{{"name", "random"}, {"strategy", {{"type", "random"}}}},
                          {{"name", "SA measured"}, {"strategy", {{"type", "measured_annealing"}}}},
                          {{"name", "evolution measured"}, {"strategy", {{"type", "measured_evolution"}}}}}},
          {"backend", {{"type", "replay"}}},
          {"budget", {{"measurements", 16}}},
          {"top_k", 4},
          {"seeds", 3},
          {"report_budgets", {4, 16}}};
}

std::size_t finished_runs(const std::string& output) {
  std::size_t count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(output + "/runs"))
    count += entry.path().filename() == "summary.json";
  return count;
}

// The summary without what a run's own wall time decides (the time-axis scores).
nlohmann::ordered_json without_time(nlohmann::ordered_json strategies) {
  for (auto& [name, row] : strategies.items()) {
    row.erase("time_score");
    row.erase("time_score_standard_error");
  }
  return strategies;
}

}  // namespace

TEST_CASE("ranks share an experiment's runs, each run once, and rank 0 writes what one process writes") {
  const std::string dir = scratch_dir("sharded_experiment");
  testing::write_toy_cache(dir + "/toy_cache.json");
  const Experiment experiment = parse_experiment(toy_experiment(dir + "/toy_cache.json"), dir + "/toy.json");
  ExperimentOptions options;
  options.jobs = 2;
  options.plots = false;
  options.output = dir + "/one";
  const auto alone = run_experiment(experiment, options);

  // 9 runs: rank 1 of 2 owns runs 1, 3, 5, 7, and returns nothing to report.
  options.output = dir + "/two";
  PlayedRanks second(1, 2);
  options.ranks = &second;
  CHECK(run_experiment(experiment, options).is_null());
  CHECK(finished_runs(dir + "/two") == 4);
  CHECK_FALSE(fs::exists(dir + "/two/summary.json"));
  // Rank 0 runs the other 5, then reads rank 1's.
  PlayedRanks first(0, 2);
  options.ranks = &first;
  const auto shared = run_experiment(experiment, options);
  CHECK(finished_runs(dir + "/two") == 9);
  CHECK(shared["reused_runs"] == 0);
  CHECK(shared["runs"] == alone["runs"]);
  CHECK(without_time(shared["strategies"]) == without_time(alone["strategies"]));
  CHECK(read_file(dir + "/two/runs.csv") == read_file(dir + "/one/runs.csv"));

  // A rank that did not finish (its runs are missing): rank 0 says whose, rather than report a hole.
  options.output = dir + "/missing";
  CHECK_THROWS_WITH(run_experiment(experiment, options), Catch::Contains("of rank 1"));
}
