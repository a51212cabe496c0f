// Kill tests: `perftune tune` on a replay campaign (with injected faults and a small per-config
// latency so that a kill lands mid-run) is SIGKILLed at random moments, at least
// PERFTUNE_KILLS times (default 20) in a row, rerun with the same command each time, and must end
// with the same best config, best_after curve and record set as an uninterrupted run, every
// config recorded exactly once. scripts/kill_soak runs the long variant.
#include <cstdlib>
#include <filesystem>
#include <iostream>

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
  const std::size_t kills_wanted = env_count("PERFTUNE_KILLS", 20);
  const std::size_t budget = env_count("PERFTUNE_KILL_BUDGET", 150);
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
  // Kill moments: uniform from just before the end of start-up (loading libraries and the source)
  // to a third of the loop past it, so most kills land in the tuning loop, a little way into the
  // remaining work (a resumed run first replays what its log holds).
  const double loop = expected.at("wall_seconds").get<double>();
  const double startup = std::max(0.0, reference.wall_seconds - loop);
  Rng rng(20261121);

  std::size_t kills = 0, killed_mid_run = 0, runs = 0, completed = 0;
  std::size_t previous_records = 0;
  for (bool finished = false; !finished;) {
    std::optional<double> kill_after;
    if (kills < kills_wanted) kill_after = 0.9 * startup + uniform_unit(rng) * (0.1 * startup + loop / 3);
    const auto run = testing::run_perftune({"tune", campaign}, {}, kill_after);
    ++runs;
    CAPTURE(runs, run.stderr_text);
    if (run.signal == SIGKILL) {
      ++kills;
    } else {
      // Finished before its kill: fine; until enough kills, the next run resumes a complete log.
      REQUIRE(run.exit_code == 0);
      ++completed;
      finished = kills >= kills_wanted;
    }
    // After every run (killed or not): whole lines only, each config at most once.
    const std::string records = dir + "/run/records.jsonl";
    const auto lines = std::filesystem::exists(records) ? testing::record_lines_per_config(records) : std::map<std::string, int>{};
    std::size_t total = 0;
    for (const auto& [config, count] : lines) {
      CAPTURE(config);
      REQUIRE(count == 1);
      REQUIRE(expected_records.count(config));
      total += 1;
    }
    killed_mid_run += run.signal == SIGKILL && total > previous_records;
    previous_records = total;
    REQUIRE(runs < kills_wanted + 1000);  // the campaign must progress
  }
  const nlohmann::json summary = testing::read_json(dir + "/run/summary.json");
  CHECK(kills >= kills_wanted);
  CHECK(summary.at("best_config") == expected.at("best_config"));
  CHECK(summary.at("best_seconds") == expected.at("best_seconds"));
  CHECK(summary.at("best_after") == expected.at("best_after"));
  CHECK(summary.at("measurements") == expected.at("measurements"));
  const auto final_records = testing::record_lines_per_config(dir + "/run/records.jsonl");
  CHECK(final_records == expected_records);
  std::size_t lost = 0;
  for (const auto& [config, count] : expected_records) lost += final_records.count(config) ? 0 : 1;
  CHECK(lost == 0);
  CHECK(RecordLog::load(dir + "/run/records.jsonl").records.size() == budget);
  std::cout << "[kill test] kills " << kills << " (" << killed_mid_run << " after new records), runs " << runs
            << " (" << completed << " completed)"
            << ", records " << final_records.size() << "/" << budget << ", lost " << lost << ", repeated 0"
            << ", reference start-up " << startup << " s, loop " << loop << " s" << std::endl;
}

}  // namespace
}  // namespace perftune
