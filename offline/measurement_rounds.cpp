#include "offline/measurement_rounds.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <random>

#include "ir/file_io.h"
#include "ir/record_log.h"

namespace perftune {

namespace {

// Configs measured per backend call: the log is written after each, so a kill loses at most one.
constexpr std::size_t kBatch = 16;

std::string round_log(const std::string& folder, std::size_t round) {
  return (std::filesystem::path(folder) / ("round_" + std::to_string(round) + ".jsonl")).string();
}

}  // namespace

std::optional<std::vector<MeasureResult>> measure_round(const Kernel& kernel, const SearchSpace& space,
                                                        const std::vector<Config>& configs, std::size_t round,
                                                        std::size_t rounds, const std::string& folder,
                                                        const std::string& device, const RoundBackend& backend,
                                                        const std::function<bool()>& stop, std::ostream* progress) {
  std::map<Config, std::size_t> index;
  for (std::size_t i = 0; i < configs.size(); ++i) index.emplace(configs[i], i);
  const std::vector<std::string> knob_names = space.knob_names();
  const std::string path = round_log(folder, round);
  std::vector<std::optional<MeasureResult>> results(configs.size());
  if (path_exists(path))
    for (const Record& record : RecordLog::load(path).records) {
      if (record.device != device || record.kernel_key != kernel.key()) continue;  // another machine's, another kernel's
      const std::optional<Config> config = in_space_order(record, knob_names);
      if (!config) continue;
      const auto it = index.find(*config);
      if (it == index.end() || results[it->second]) continue;
      results[it->second] = record.result;
    }
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (!results[i]) todo.push_back(i);
  std::mt19937_64 order(round);
  std::shuffle(todo.begin(), todo.end(), order);
  if (!todo.empty()) {
    std::filesystem::create_directories(folder);
    RecordLog log(path);
    log.define_kernel(kernel, space);
    for (std::size_t start = 0; start < todo.size(); start += kBatch) {
      if (stop && stop()) return std::nullopt;
      const std::size_t end = std::min(todo.size(), start + kBatch);
      std::vector<Config> batch;
      for (std::size_t j = start; j < end; ++j) batch.push_back(configs[todo[j]]);
      const std::vector<MeasureResult> measured = backend().measure(kernel, space, batch);
      for (std::size_t j = start; j < end; ++j) {
        const MeasureResult& result = measured.at(j - start);
        log.append(Record{device, kernel.key(), kernel.name(), knob_names, configs[todo[j]], result, unix_now()});
        results[todo[j]] = result;
      }
      if (progress)
        *progress << "re-measured " << kernel.name() << ": round " << round << "/" << rounds << ", " << end << "/"
                  << todo.size() << " configs" << std::endl;
    }
  }
  std::vector<MeasureResult> out;
  for (std::optional<MeasureResult>& result : results) out.push_back(std::move(*result));
  return out;
}

Remeasured remeasure(const Kernel& kernel, const SearchSpace& space, const std::vector<Config>& configs,
                     std::size_t rounds, const std::string& folder, const BackendMaker& make_backend,
                     const std::function<bool()>& stop, std::ostream* progress) {
  Remeasured out{std::vector<std::vector<MeasureResult>>(configs.size()), false};
  std::unique_ptr<Backend> backend = make_backend();
  const std::string device = backend->fingerprint();
  const RoundBackend round_backend = [&]() -> Backend& {
    if (!backend) backend = make_backend();
    return *backend;
  };
  for (std::size_t round = 1; round <= rounds; ++round) {
    const auto results = measure_round(kernel, space, configs, round, rounds, folder, device, round_backend, stop, progress);
    if (!results) return out;
    for (std::size_t i = 0; i < configs.size(); ++i) out.rounds[i].push_back((*results)[i]);
    backend.reset();  // fresh workers each round (a backend starts its workers on first use)
  }
  out.complete = true;
  return out;
}

std::optional<double> remeasured_seconds(const std::vector<MeasureResult>& rounds) {
  if (rounds.empty()) return std::nullopt;
  std::vector<double> times;
  for (const MeasureResult& result : rounds) times.push_back(result.ok() ? result.seconds : std::numeric_limits<double>::infinity());
  std::sort(times.begin(), times.end());
  // The lower median: with an even count, one failure in two is not yet a failed config.
  const double median = times[(times.size() - 1) / 2];
  return std::isfinite(median) ? std::optional<double>(median) : std::nullopt;
}

}  // namespace perftune
