#pragma once
// The summary `perftune inspect` prints: counts over a corpus and a line per measured kernel.
#include <nlohmann/json.hpp>

#include "ir/corpus.h"

namespace perftune {

// {"format", "path", "programs", "computations", "kernels", "instructions", "measurements",
//  "failed", "devices", "per_kernel": [{"name", "key", "device", "instructions", "knobs",
//  "measurements", "failed", "best_seconds", "default_seconds"?}]}
nlohmann::ordered_json summarize(const Corpus& corpus);
// Human-readable table of the same.
std::string summary_table(const nlohmann::ordered_json& summary);

}  // namespace perftune
