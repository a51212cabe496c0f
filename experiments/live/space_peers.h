#pragma once
// The platform's own schedulers on the live spaces of an experiment (Backend::measure_peers:
// Halide's autoschedulers on the CPU), measured once per space rather than once per run, and kept
// beside the runs so a rerun of the experiment reuses them.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "autotuner/campaign/campaign.h"

namespace perftune {

// {"Adams2019": {"kind": "scheduler", "settings": ..., "status": "ok", "seconds": ...}, ...} for
// the space of `campaign` (a program target on a live backend), read from `file` when it holds the
// same kernel on the same device, else measured and written there.
nlohmann::ordered_json space_peers(const Campaign& campaign, const std::string& file);

// The peers measured again as a re-measured live space's configs are (remeasurement.h), so a pick
// and a peer compare on one machine and day: `repeats` rounds, each a fresh backend, kept in
// FOLDER/peers_round_N.json (a round already there is reused); per peer its kind, settings, the
// seconds of each round (null where it failed) and "seconds", the median of its rounds (a failed
// round slower than any time; null when the median failed). Empty when `stop` says so between rounds.
std::optional<nlohmann::ordered_json> remeasured_peers(const Campaign& campaign, const std::string& folder, std::size_t repeats,
                                                       const std::function<bool()>& stop);

}  // namespace perftune
