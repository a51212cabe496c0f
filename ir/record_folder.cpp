#include "ir/record_folder.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "ir/input_error.h"
#include "ir/record_log.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

bool is_log_name(const fs::path& path) {
  const std::string name = path.filename().string();
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".jsonl") || ends_with(".jsonl.gz");
}

// A record log's first line is a versioned, typed object; other JSON Lines files are not ours to read.
bool looks_like_record_log(const fs::path& path) {
  if (path.extension() == ".gz") return true;  // only perftune writes gzipped logs (a committed corpus)
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      const auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      return json.is_object() && json.contains("v") && json.contains("type");
    }
  return false;  // empty: nothing measured
}

// Adds `from`'s configs that `into` lacks; a success replaces a recorded failure of the same config.
void merge_measurements(MeasuredKernel& into, const MeasuredKernel& from, std::map<Config, std::size_t>& index) {
  for (const Measurement& m : from.measurements) {
    const auto [it, inserted] = index.emplace(m.config, into.measurements.size());
    if (inserted) into.measurements.push_back(m);
    else if (!into.measurements[it->second].result.ok() && m.result.ok()) into.measurements[it->second] = m;
  }
  for (const auto& [name, seconds] : from.references) into.references.emplace(name, seconds);
}

}  // namespace

Corpus load_record_folder(const std::string& folder) {
  std::vector<fs::path> logs;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(folder, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error))
    if (it->is_regular_file() && is_log_name(it->path())) logs.push_back(it->path());
  if (error) throw InputError(folder, "", "a readable folder (" + error.message() + ")");
  std::sort(logs.begin(), logs.end());

  Corpus corpus;
  corpus.format = "record-log";
  corpus.path = folder;
  std::map<SpaceKey, std::size_t> kernel_index;
  std::vector<std::map<Config, std::size_t>> config_index;
  for (const fs::path& path : logs) {
    if (!looks_like_record_log(path)) {
      corpus.notes.push_back(path.string() + ": not a record log, skipped");
      continue;
    }
    const LoadedLog log = RecordLog::load(path.string());
    corpus.notes.insert(corpus.notes.end(), log.warnings.begin(), log.warnings.end());
    for (const MeasuredKernel& kernel : corpus_from_log(log, path.string()).kernels) {
      const SpaceKey key{kernel.device, kernel.kernel.key(), kernel.space->knob_names()};
      auto it = kernel_index.find(key);
      if (it == kernel_index.end()) {
        it = kernel_index.emplace(key, corpus.kernels.size()).first;
        MeasuredKernel empty = kernel;
        empty.measurements.clear();
        empty.references.clear();
        corpus.kernels.push_back(std::move(empty));
        config_index.emplace_back();
      }
      MeasuredKernel& merged = corpus.kernels[it->second];
      if (merged.kernel.body().empty() && !kernel.kernel.body().empty()) {  // a definition met after a log without it
        merged.kernel = kernel.kernel;
        merged.space = kernel.space;
      }
      merge_measurements(merged, kernel, config_index[it->second]);
    }
  }
  // A kernel logged without its definition has a space inferred from one log's configs: widen it to all of them.
  for (MeasuredKernel& kernel : corpus.kernels) {
    std::vector<Config> configs;
    for (const Measurement& m : kernel.measurements) configs.push_back(m.config);
    if (!std::all_of(configs.begin(), configs.end(), [&](const Config& c) { return kernel.space->contains(c); }))
      kernel.space = std::make_shared<SearchSpace>(SearchSpace::recorded(kernel.space->knob_names(), configs));
  }
  if (corpus.kernels.empty()) throw InputError(folder, "", "a folder holding perftune record logs (*.jsonl, *.jsonl.gz)");
  return corpus;
}

}  // namespace perftune
