#pragma once
// What one run of a campaign found (run_campaign's result, written as DIR/summary.json): typed for
// the code that reads it (experiments, the command line, benches), JSON for files and scripts.
// to_json writes the fields in a fixed order; from_json reads what to_json wrote, and names the
// file and field of a summary that lacks what every run has.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace perftune {

// A named default of a program target (no fusion, greedy fusion) or a peer of a live backend (an
// autoscheduler, the library), and the best config's speedup over it.
struct SummaryDefault {
  std::string name;
  std::optional<nlohmann::ordered_json> config;  // a named default: its config; a peer: none
  // A peer only:
  std::string kind, status;
  nlohmann::ordered_json settings;
  std::optional<std::string> message;  // a failed peer's reason
  std::optional<double> seconds, speedup;
};

// Where the tuning loop's time outside the backend went.
struct OutsideBackend {
  double propose_seconds = 0, rank_seconds = 0, update_seconds = 0, record_seconds = 0, other_seconds = 0;
  struct ModelCache {
    double predict_seconds = 0;  // the model's own predict time
    std::size_t hits = 0, misses = 0;
  };
  std::optional<ModelCache> model;  // a run with a model
};

// What a run of the budget loop records beyond the curves (absent for a peer's samples at equal
// budget, autotuner/autoscheduler_sampling.h).
struct TuningDetails {
  std::string model;  // the model's type
  nlohmann::ordered_json best_config, default_config;  // null: none
  std::optional<double> speedup_over_default, optimum_seconds;  // optimum: a recording's best
  std::optional<std::vector<SummaryDefault>> defaults;  // a program target's
  std::map<std::string, std::size_t> failed_by_status;
  std::size_t quarantined = 0, retries = 0, confirmations = 0, from_log = 0, rounds = 0;
  bool confirm_best = false;
  double confirm_close_best = 0;
  std::optional<std::map<std::string, std::size_t>> faults_injected;  // a fault-injecting backend's
  double search_seconds = 0, search_share = 0;
  std::optional<double> search_time_share;  // the limit; none when unlimited
  OutsideBackend outside_backend;
  std::string stop_reason, records;  // records: the record log's path
};

struct CampaignSummary {
  // What ran.
  std::string campaign, campaign_file, kernel, kernel_key, device, strategy;
  std::uint64_t seed = 0;
  // What it found.
  std::optional<double> best_seconds, default_seconds;
  std::size_t measurements = 0, failed = 0;
  double hardware_seconds = 0, wall_seconds = 0, load_seconds = 0;
  // After each measurement: the best so far (none before a success), the hardware seconds charged,
  // and the loop's time outside the backend before its batch was sent.
  std::vector<std::optional<double>> best_after;
  std::vector<double> hardware_after, search_after;
  std::optional<TuningDetails> tuning;              // the budget loop's run
  std::optional<std::size_t> distinct_schedules;    // a peer's samples: how many differed
};

nlohmann::ordered_json to_json(const CampaignSummary& summary);
// Throws InputError naming `file` and the field when a field every run has is missing or mistyped.
CampaignSummary campaign_summary_from_json(const nlohmann::json& json, const std::string& file);

}  // namespace perftune
