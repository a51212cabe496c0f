#pragma once
// Where files that are not beside a config are found. External data (../shared/data): the
// PERFTUNE_DATA environment variable, else the folder fixed at configure time (the project root's
// ../shared/data).
#include <optional>
#include <string>

namespace perftune {

std::string data_dir();
// `relative` under data_dir() if it exists, else nullopt (callers skip with a clear message).
std::optional<std::string> find_data(const std::string& relative);
// A path written in a config file, made usable: "${PERFTUNE_DATA}/x" -> data_dir()/x; a relative
// path -> relative to `base_dir` (the config's folder); absolute paths unchanged.
std::string resolve_config_path(const std::string& value, const std::string& base_dir);
// The pre-trained Halide CPU cost model the project ships (models/halide_cpu.json, retrained by
// scripts/train_shipped_model): the PERFTUNE_MODEL environment variable, else the file fixed at
// configure time in the project's models/ folder.
std::string shipped_model_path();

}  // namespace perftune
