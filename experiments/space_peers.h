#pragma once
// The platform's own schedulers on the live spaces of an experiment (Backend::measure_peers:
// Halide's autoschedulers on the CPU), measured once per space rather than once per run, and kept
// beside the runs so a rerun of the experiment reuses them.
#include <string>

#include <nlohmann/json.hpp>

#include "autotuner/campaign.h"

namespace perftune {

// {"Adams2019": {"kind": "scheduler", "settings": ..., "status": "ok", "seconds": ...}, ...} for
// the space of `campaign` (a program target on a live backend), read from `file` when it holds the
// same kernel on the same device, else measured and written there.
nlohmann::ordered_json space_peers(const Campaign& campaign, const std::string& file);

}  // namespace perftune
