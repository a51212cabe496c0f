#include "offline/corpus_remeasure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "hardware/timing/sample_timer.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/knob_roles.h"
#include "ir/output_lock.h"
#include "ir/record_log.h"

namespace perftune {

namespace {

bool is_selected(RemeasuredSpaces spaces, const SearchSpace& space) {
  switch (spaces) {
    case RemeasuredSpaces::kFusion: return is_fusion_space(space);
    case RemeasuredSpaces::kTile: return !is_fusion_space(space);
    case RemeasuredSpaces::kAll: return true;
  }
  return false;
}

// One kernel's space to re-measure: its definition and the configs of its successful records.
struct SpaceToRemeasure {
  const KernelDefinition* definition = nullptr;
  std::vector<Config> configs;
  std::vector<std::vector<MeasureResult>> rounds;  // per config, one result per round
};

// The config of a record line in the space's knob order; nullopt for a record of another space.
std::optional<Config> line_config(const nlohmann::ordered_json& line, const std::vector<std::string>& knob_names) {
  const auto config = line.find("config");
  if (config == line.end() || !config->is_object() || config->size() != knob_names.size()) return std::nullopt;
  Config out;
  for (const std::string& name : knob_names) {
    const auto value = config->find(name);
    if (value == config->end() || !value->is_number_integer()) return std::nullopt;
    out.values.push_back(value->get<std::int64_t>());
  }
  return out;
}

}  // namespace

std::optional<RemeasuredSpaces> parse_remeasured_spaces(const std::string& name) {
  if (name == "fusion") return RemeasuredSpaces::kFusion;
  if (name == "tile") return RemeasuredSpaces::kTile;
  if (name == "all") return RemeasuredSpaces::kAll;
  return std::nullopt;
}

CorpusRemeasureSummary remeasure_corpus(const CorpusRemeasureSpec& spec, const BackendMaker& make_backend,
                                        const std::function<bool()>& stop,
                                        const std::function<void(const CollectProgress&)>& progress) {
  const auto started = std::chrono::steady_clock::now();
  // One writer per output, the lock collect takes on a log (LOG.lock): two re-measurements of one
  // output would each append every round's records to the same round logs, and a collect writing
  // the corpus being re-measured in place would lose its new records at the merge.
  if (const auto parent = std::filesystem::path(spec.output).parent_path(); !parent.empty())
    std::filesystem::create_directories(parent);
  const OutputLock lock(spec.output + ".lock", "the record log " + spec.output);
  const LoadedLog log = RecordLog::load(spec.input);
  CorpusRemeasureSummary summary;
  std::unique_ptr<Backend> backend = make_backend();
  summary.device = backend->fingerprint();

  std::map<std::string, SpaceToRemeasure> spaces;  // by kernel key: a log defines one space per key
  for (const Record& record : log.records) {
    const auto definition = log.kernels.find(record.kernel_key);
    if (definition == log.kernels.end() || !is_selected(spec.spaces, *definition->second.space)) continue;
    const std::optional<Config> config = in_space_order(record, definition->second.space->knob_names());
    if (!config || !record.result.ok()) continue;  // another space of the key; a failure stays one
    if (record.device != summary.device) {
      ++summary.other_device;
      continue;
    }
    SpaceToRemeasure& space = spaces[record.kernel_key];
    space.definition = &definition->second;
    space.configs.push_back(*config);
  }
  if (spaces.empty())
    throw InputError(spec.input, "its records",
                     "successful records of the selected spaces measured on this device (" + summary.device + ")" +
                         (summary.other_device > 0 ? "; " + std::to_string(summary.other_device) + " are another device's" : ""));

  CollectProgress done;
  for (auto& [key, space] : spaces) {
    done.planned += space.configs.size() * spec.rounds;
    space.rounds.resize(space.configs.size());
  }
  // Round by round, every space of a round on one backend: a fresh backend per space and round
  // costs worker starts and probe compiles that outweigh the measurements of a space of a few
  // configs (as most of a generated corpus's are), and a sitting is one set of worker processes anyway.
  const RoundBackend round_backend = [&]() -> Backend& {
    if (!backend) backend = make_backend();
    return *backend;
  };
  for (std::size_t round = 1; round <= spec.rounds; ++round) {
    for (auto& [key, space] : spaces) {
      const std::string folder = (std::filesystem::path(spec.rounds_folder) / key).string();
      const auto results = measure_round(space.definition->kernel, *space.definition->space, space.configs, round, spec.rounds,
                                         folder, summary.device, round_backend, stop, nullptr);
      if (!results) return summary;
      for (std::size_t i = 0; i < results->size(); ++i) space.rounds[i].push_back((*results)[i]);
      done.done += results->size();
      done.failed += static_cast<std::size_t>(std::count_if(results->begin(), results->end(), [](const MeasureResult& r) { return !r.ok(); }));
      done.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (progress) progress(done);
    }
    backend.reset();  // fresh workers each round
  }

  // Every other line is copied byte for byte; a re-measured record is rewritten with its median.
  const std::string text = read_maybe_gzip(spec.input);
  std::string merged;
  merged.reserve(text.size() + text.size() / 8);
  std::vector<double> changes;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find("\"type\":\"record\"") == std::string::npos) {
      if (!line.empty()) merged += line + "\n";
      continue;
    }
    // A torn last line (RecordLog::load skipped it) is copied as it was.
    nlohmann::ordered_json record = nlohmann::ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
    const auto space = record.is_discarded() ? spaces.end() : spaces.find(record.value("kernel", ""));
    std::optional<std::size_t> index;
    if (space != spaces.end() && record.value("device", "") == summary.device && record.value("status", "") == "ok")
      if (const std::optional<Config> config = line_config(record, space->second.definition->space->knob_names())) {
        const std::vector<Config>& configs = space->second.configs;
        const auto at = std::find(configs.begin(), configs.end(), *config);
        if (at != configs.end()) index = static_cast<std::size_t>(at - configs.begin());
      }
    if (!index) {
      merged += line + "\n";
      continue;
    }
    // The recorded figure: the first sitting of a record re-measured before.
    const auto earlier = record.find("sittings");
    const double recorded = earlier != record.end() && earlier->is_array() && !earlier->empty() && earlier->front().is_number()
                                ? earlier->front().get<double>()
                                : record.at("seconds").get<double>();
    const std::vector<MeasureResult>& rounds = space->second.rounds[*index];
    std::vector<MeasureResult> sittings = {MeasureResult::from_repeats({recorded}, 0.0)};
    sittings.insert(sittings.end(), rounds.begin(), rounds.end());
    const std::optional<double> median = remeasured_seconds(sittings);
    if (!median) {
      ++summary.failed_median;
      merged += line + "\n";
      continue;
    }
    nlohmann::ordered_json figures = nlohmann::ordered_json::array();
    for (const MeasureResult& sitting : sittings) figures.push_back(sitting.ok() ? nlohmann::ordered_json(sitting.seconds) : nlohmann::ordered_json());
    record["seconds"] = *median;
    record["sittings"] = std::move(figures);
    merged += record.dump() + "\n";
    changes.push_back(std::abs(*median / recorded - 1.0));
    ++summary.configs;
  }
  write_file_atomically(spec.output, merged);
  summary.spaces = spaces.size();
  summary.median_change = changes.empty() ? 0.0 : median_of(std::move(changes));
  summary.complete = true;
  return summary;
}

}  // namespace perftune
