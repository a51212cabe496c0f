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
//    "output": DIR, "default": {knob: value, ...},
//    and the tuning loop's keys ("top_k", "epsilon", "seed", ...: campaign_tuner_settings(), whose
//    reference is docs/settings.md)}
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
#include "ir/settings_table.h"

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
  // The tuning loop's options: the budget's measurements and hardware seconds, and every key of
  // campaign_tuner_settings() (documented in docs/settings.md). Their defaults follow the
  // backend's traits where the backend matters (retries, confirmations, the search time share).
  TunerOptions tuner;
  double max_tuning_seconds = 0.0;    // networks: the tuning time (autotuner/network/network_tuner.h); 0: none
  Allocation allocation = Allocation::kGradient;  // networks: how rounds are shared among kernels
  std::string output;                 // folder for records.jsonl and summary.json
  std::optional<nlohmann::json> default_config;  // knob object, checked against the space later
};

// The campaign's top-level keys that set TunerOptions, declared once (docs/settings.md).
const SettingsTable<TunerOptions>& campaign_tuner_settings();

// Throws InputError (file, JSON path, expectation) for invalid campaigns, including a budget with
// neither a positive measurement count nor positive hardware seconds.
Campaign load_campaign(const std::string& path);
Campaign parse_campaign(const nlohmann::json& json, const std::string& file);

}  // namespace perftune
