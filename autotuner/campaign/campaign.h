#pragma once
// A tuning campaign read from JSON (configs/campaigns/*.json): what to tune, on which backend,
// with which model and strategy, under which budget. Every section is validated on load, so a
// misspelled key or a wrong type fails before anything is measured, naming its JSON path.
//
//   {"name": "...", "description": "...",
//    "source": {"path": FILE, "kernel": NAME_OR_KEY, "device": NAME}
//            | {"program": PROGRAM.json, "kernel": NAME | "fusion"}
//            | {"network": MODEL.onnx | PROGRAM.json}   (every kernel of it: autotuner/network/),
//    "backend": {...}, "model": {...}, "strategy": {...}   (see the *_factory.h headers),
//    "budget": {"measurements": N, "hardware_seconds": S, "minutes": M},   (any; minutes: networks only)
//    "allocation": "gradient" | "equal",   (networks only: autotuner/network/task_scheduler.h)
//    "top_k": K, "ramp_batches": false, "epsilon": 0.05, "early_stopping": N, "seed": 1,
//    "timeout_retries": 2, "confirm_best": true, "confirm_close_best": 0.1, "search_time_share": 0.1,
//    "output": DIR, "default": {knob: value, ...}}
// Relative paths resolve against the campaign file's folder; a "${PERFTUNE_DATA}" prefix
// resolves to data_dir().
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "autotuner/factories/backend_factory.h"
#include "autotuner/factories/model_factory.h"
#include "autotuner/factories/strategy_factory.h"
#include "autotuner/network/task_scheduler.h"
#include "autotuner/tuner.h"

namespace perftune {

// The floor for live campaigns: at most 10% of the tuning loop's wall time outside the hardware
// (issue 6's target for the CPU fusion campaign).
inline constexpr double kDefaultSearchTimeShare = 0.1;

struct CampaignSource {
  std::string path;     // a recorded source (any format load_source reads); empty for programs
  std::string program;  // a program JSON; empty for recorded sources
  std::string network;  // an ONNX model or a program JSON, every kernel of it tuned; empty otherwise
  std::string kernel;   // kernel name or key ("fusion" for a program's fusion space); "" = the only one
  std::string device;   // "" = the only device of the source
};

struct Campaign {
  std::string file;  // the campaign's own path
  std::string name;
  CampaignSource source;
  BackendSpec backend;
  ModelSpec model;
  StrategySpec strategy;
  std::size_t max_measurements = 0;   // 0: none
  double max_hardware_seconds = 0.0;  // 0: none
  double max_tuning_seconds = 0.0;    // networks: the tuning time (autotuner/network/network_tuner.h); 0: none
  Allocation allocation = Allocation::kGradient;  // networks: how rounds are shared among kernels
  std::size_t top_k = 0;              // 0: default_top_k
  bool ramp_batches = false;          // TunerOptions::ramp_batches
  double epsilon = 0.05;              // Ansor's eps_greedy default
  std::size_t early_stopping = 0;     // 0: never
  std::uint64_t seed = 0;
  // Retries of a timed-out measurement; unset: 2, or 0 for a plain replay (a recording answers
  // the same every time, a retry would only be charged again).
  std::optional<std::size_t> timeout_retries;
  // Measure a suspicious would-be new best again (TunerOptions::confirm_best). Unset: on for a live
  // or fault-injected backend, whose one fast time may be a glitch; off for a plain replay, which
  // answers the same every time.
  std::optional<bool> confirm_best;
  double confirm_close_best = 0.0;  // TunerOptions::confirm_close_best, in [0, 1); 0: off
  // TunerOptions::search_time_share, in (0, 1]; 1: no limit. Unset: kDefaultSearchTimeShare on a
  // live backend, no limit on a replay (its hardware time is not wall time, and a replay must
  // propose the same configs on any machine).
  std::optional<double> search_time_share;
  std::string output;                 // folder for records.jsonl and summary.json
  std::optional<nlohmann::json> default_config;  // knob object, checked against the space later
};

// Throws InputError (file, JSON path, expectation) for invalid campaigns, including a budget with
// neither a positive measurement count nor positive hardware seconds.
Campaign load_campaign(const std::string& path);
Campaign parse_campaign(const nlohmann::json& json, const std::string& file);

// The budget loop's settings a campaign gives (top_k, epsilon, retries, confirmation, search time
// share, budget, seed); configs to measure first are the caller's.
TunerOptions campaign_tuner_options(const Campaign& campaign);


}  // namespace perftune
