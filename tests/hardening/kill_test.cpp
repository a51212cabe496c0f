// Kill tests: `perftune tune` on a replay campaign (with injected faults and a small per-config
// latency) is SIGKILLed at uniform random moments within an uninterrupted run's duration and rerun
// with the same command until it completes; that episode must end with the same best config,
// best_after curve and record set as an uninterrupted run, every config recorded exactly once.
// Episodes repeat from an empty output folder until PERFTUNE_KILLS kills (default 5, so ctest
// stays quick); scripts/kill_soak runs the long variant (300 kills by default).
//
// The kill moments adapt to the machine: uniform over the working part of an uninterrupted run
// from an empty folder (from just before its start-up ends, i.e. loading libtorch and the source,
// to its end), as last measured: first by the reference run, then by every episode's first run
// that finished before its kill. A loaded or a quiet machine both get kills spread over the loop.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <catch2/catch.hpp>

#include "hardening/toy_recording.h"
#include "ir/random.h"
#include "test_support.h"

namespace perftune {
namespace {

std::size_t env_count(const char* name, std::size_t fallback) {
  const char* value = std::getenv(name);
  return value ? static_cast<std::size_t>(std::strtoull(value, nullptr, 10)) : fallback;
}

TEST_CASE("a campaign SIGKILLed at random moments resumes to the uninterrupted end", "[kill]") {
  const std::size_t kills_wanted = env_count("PERFTUNE_KILLS", 5);
  const std::size_t budget = env_count("PERFTUNE_KILL_BUDGET", 100);
  const std::string dir = scratch_dir("hardening_kill");
  testing::write_recording(testing::toy_recording(), dir + "/source.jsonl");
  const std::string campaign = testing::write_campaign(
      dir + "/campaign.json",
      {{"source", {{"path", "source.jsonl"}}},
       {"backend",
        {{"type", "replay"}, {"faults", {{"share", 0.2}, {"seed", 11}, {"hang_seconds", 0.002}, {"latency_seconds", 0.004}}}}},
       {"strategy", {{"type", "measured_annealing"}}},
       {"budget", {{"measurements", budget}}},
       {"top_k", 3},
       {"seed", 5},
       {"confirm_best", true},
       {"output", "run"}});

  const auto reference = testing::run_perftune({"tune", campaign, "--output", dir + "/reference"});
  CAPTURE(reference.stderr_text);
  REQUIRE(reference.exit_code == 0);
  const nlohmann::json expected = testing::read_json(dir + "/reference/summary.json");
  REQUIRE(expected.at("measurements") == budget);
  const auto expected_records = testing::record_lines_per_config(dir + "/reference/records.jsonl");
  // An uninterrupted run's start-up and total wall time, as last measured.
  auto startup_of = [](const testing::ChildRun& run, const nlohmann::json& summary) {
    return std::max(0.0, run.wall_seconds - summary.at("wall_seconds").get<double>());
  };
  double startup = startup_of(reference, expected), window = reference.wall_seconds;
  Rng rng(20261121);

  std::size_t kills = 0, killed_mid_run = 0, runs = 0, completed = 0, episodes = 0, lost = 0;
  const std::string records = dir + "/run/records.jsonl";
  while (kills < kills_wanted) {
    // One episode: a fresh campaign, killed and resumed until it completes.
    std::filesystem::remove_all(dir + "/run");
    ++episodes;
    std::size_t previous_records = 0;
    for (bool first = true, finished = false; !finished; first = false) {
      // Once enough kills, the episode runs to its end unkilled.
      std::optional<double> kill_after;
      if (kills < kills_wanted) kill_after = 0.9 * startup + uniform_unit(rng) * (window - 0.9 * startup);
      const auto run = testing::run_perftune({"tune", campaign}, {}, kill_after);
      ++runs;
      CAPTURE(episodes, runs, kill_after.value_or(-1), startup, window, run.stderr_text);
      if (run.signal == SIGKILL) {
        ++kills;
      } else {
        REQUIRE(run.exit_code == 0);
        ++completed;
        finished = true;
        if (first) {  // uninterrupted from an empty folder: the new window
          window = run.wall_seconds;
          startup = startup_of(run, testing::read_json(dir + "/run/summary.json"));
        }
      }
      // After every run (killed or not): whole lines only, each config at most once.
      const auto lines = std::filesystem::exists(records) ? testing::record_lines_per_config(records) : std::map<std::string, int>{};
      for (const auto& [config, count] : lines) {
        CAPTURE(config);
        REQUIRE(count == 1);
        REQUIRE(expected_records.count(config));
      }
      killed_mid_run += run.signal == SIGKILL && lines.size() > previous_records;
      REQUIRE(lines.size() >= previous_records);  // nothing recorded is ever lost
      previous_records = lines.size();
      REQUIRE(runs < 20 * kills_wanted + 100);  // the campaign must progress
    }
    const nlohmann::json summary = testing::read_json(dir + "/run/summary.json");
    CHECK(summary.at("best_config") == expected.at("best_config"));
    CHECK(summary.at("best_seconds") == expected.at("best_seconds"));
    CHECK(summary.at("best_after") == expected.at("best_after"));
    CHECK(summary.at("measurements") == expected.at("measurements"));
    const auto final_records = testing::record_lines_per_config(records);
    CHECK(final_records == expected_records);
    for (const auto& [config, count] : expected_records) lost += final_records.count(config) ? 0 : 1;
    CHECK(RecordLog::load(records).records.size() == budget);
  }
  CHECK(lost == 0);
  std::cout << "[kill test] kills " << kills << " (" << killed_mid_run << " after new records), runs " << runs << " ("
            << completed << " completed), episodes " << episodes << ", records " << budget << " per episode, lost " << lost
            << ", repeated 0, last window " << 0.9 * startup << "-" << window << " s (reference run " << reference.wall_seconds << " s)" << std::endl;
}

}  // namespace
}  // namespace perftune
