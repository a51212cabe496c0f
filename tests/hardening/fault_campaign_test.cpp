// Faults and retries configured from a campaign: validated with their JSON path, and a rehearsal
// campaign run end to end reports what was injected and how it was handled.
#include <catch2/catch.hpp>

#include "autotuner/campaign/campaign.h"
#include "autotuner/campaign/campaign_runner.h"
#include "hardening/toy_recording.h"
#include "ir/input_error.h"
#include "test_support.h"

namespace perftune {
namespace {

nlohmann::json rehearsal_campaign() {
  return nlohmann::json::parse(R"({
    "source": {"path": "source.jsonl"},
    "backend": {"type": "replay",
                "faults": {"share": 0.3, "kinds": ["compile_error", "hang", "crash", "nan", "negative", "off_100x"],
                           "seed": 2, "hang_seconds": 0.001}},
    "strategy": {"type": "measured_annealing"},
    "budget": {"measurements": 50},
    "top_k": 5, "seed": 4, "timeout_retries": 1,
    "output": "run"
  })");
}

TEST_CASE("fault settings in a campaign are validated with their JSON path") {
  const auto [pointer, replacement, place, expected] = GENERATE(table<std::string, std::string, std::string, std::string>({
      {"/backend/faults/share", "1.5", "$.backend.faults.share", "[0, 1]"},
      {"/backend/faults/share", "-0.5", "$.backend.faults.share", "non-negative"},
      {"/backend/faults/kinds/1", "\"meltdown\"", "$.backend.faults.kinds[1]", "one of \"compile_error\""},
      {"/backend/faults/kinds", "[]", "$.backend.faults.kinds", "at least one fault kind"},
      {"/backend/faults/seed", "-1", "$.backend.faults.seed", "non-negative"},
      {"/backend/faults/hang_seconds", "3600", "$.backend.faults.hang_seconds", "at most"},
      {"/backend/faults/shares", "0.1", "$.backend.faults.shares", "no such key"},
      {"/timeout_retries", "-1", "$.timeout_retries", "non-negative"},
      {"/confirm_best", "\"yes\"", "$.confirm_best", "true or false"},
  }));
  CAPTURE(pointer, replacement);
  nlohmann::json json = rehearsal_campaign();
  json[nlohmann::json::json_pointer(pointer)] = nlohmann::json::parse(replacement);
  try {
    parse_campaign(json, "campaigns/rehearsal.json");
    FAIL("accepted an invalid campaign");
  } catch (const InputError& error) {
    CAPTURE(error.what());
    CHECK(error.place() == place);
    CHECK_THAT(error.what(), Catch::Contains(expected));
  }
}

TEST_CASE("a rehearsal campaign on faulty replay hardware completes and reports its faults") {
  const std::string dir = scratch_dir("hardening_rehearsal");
  const Corpus corpus = testing::toy_recording();
  testing::write_recording(corpus, dir + "/source.jsonl");
  const Campaign campaign = parse_campaign(rehearsal_campaign(), dir + "/rehearsal.json");
  CHECK(campaign.backend.faults->share == 0.3);
  CHECK(campaign.tuner.timeout_retries == 1u);
  CHECK(campaign.tuner.confirm_best);  // unset: on, because the backend injects faults
  const CampaignSummary summary = run_campaign(campaign);
  REQUIRE(summary.tuning);
  const TuningDetails& tuning = *summary.tuning;
  CHECK(summary.measurements == 50);
  CHECK_THAT(summary.device, Catch::Contains("+faults(share=0.3,seed=2"));
  std::size_t injected = 0;
  REQUIRE(tuning.faults_injected);
  for (const auto& [kind, count] : *tuning.faults_injected) injected += count;
  CHECK(injected > 0);
  CHECK(summary.failed > 0);
  CHECK(tuning.quarantined == summary.failed);
  CHECK(tuning.confirm_best);
  CHECK(tuning.confirmations > 0);
  std::size_t by_status = 0;
  for (const auto& [status, count] : tuning.failed_by_status) by_status += count;
  CHECK(by_status == summary.failed);
  // The best is a real recorded runtime of its config.
  const auto truth = testing::recorded_seconds(corpus);
  const Config best = corpus.kernels.front().space->from_json(nlohmann::json::parse(tuning.best_config.dump()));
  CHECK(summary.best_seconds.value() == truth.at(best));
  CHECK(RecordLog::load(dir + "/run/records.jsonl").records.size() == 50);
}

}  // namespace
}  // namespace perftune
