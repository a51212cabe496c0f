#include "hardware/wrappers/measure_once_backend.h"

#include <algorithm>
#include <filesystem>

namespace perftune {

namespace {

bool repeatable(MeasureStatus status) {
  return status == MeasureStatus::kOk || status == MeasureStatus::kCompileError || status == MeasureStatus::kInvalidConfig ||
         status == MeasureStatus::kWrongResult;
}

}  // namespace

std::string MeasurementMemo::key(const std::string& device, const std::string& kernel_key, const std::vector<std::string>& knob_names,
                                 const Config& config) {
  // By knob name, in name order: a loaded record lists its knobs in its JSON object's order.
  std::vector<std::pair<std::string, std::int64_t>> knobs;
  for (std::size_t k = 0; k < knob_names.size() && k < config.values.size(); ++k) knobs.emplace_back(knob_names[k], config.values[k]);
  std::sort(knobs.begin(), knobs.end());
  std::string text = device + '\n' + kernel_key;
  for (const auto& [name, value] : knobs) text += '\n' + name + '=' + std::to_string(value);
  return text;
}

MeasurementMemo::MeasurementMemo(const std::string& path, MemoScope scope)
    : scope_(scope), log_([&] {
        // Read before the log is opened for appending, which cuts off a torn last line.
        if (std::filesystem::exists(path))
          for (const Record& r : RecordLog::load(path).records)
            if (repeatable(r.result.status)) earlier_.emplace(key(r.device, r.kernel_key, r.knob_names, r.config), r.result);
        return path;
      }()) {}

const MeasureResult* MeasurementMemo::served(const std::string& k) const {
  if (const auto it = results_.find(k); it != results_.end()) return &it->second;
  if (scope_ == MemoScope::kExperiment)
    if (const auto it = earlier_.find(k); it != earlier_.end()) return &it->second;
  return nullptr;
}

std::optional<MeasureResult> MeasurementMemo::find(const std::string& device, const Kernel& kernel, const SearchSpace& space,
                                                   const Config& config) const {
  const std::string k = key(device, kernel.key(), space.knob_names(), config);
  const std::lock_guard lock(mutex_);
  const MeasureResult* result = served(k);
  if (!result) return std::nullopt;
  return *result;
}

void MeasurementMemo::add(const std::string& device, const Kernel& kernel, const SearchSpace& space, const Config& config,
                          const MeasureResult& result) {
  if (!repeatable(result.status)) return;
  const std::vector<std::string> names = space.knob_names();
  const std::string k = key(device, kernel.key(), names, config);
  const std::lock_guard lock(mutex_);
  if (served(k)) return;  // the first figure it serves stays
  results_.emplace(k, result);
  // Records only, no kernel definitions: two spaces of one kernel (a program's fusion placements
  // and its whole-program schedule) share its key but not their knobs, and a definition would
  // make the records of the other space invalid on load.
  log_.append(Record{device, kernel.key(), kernel.name(), names, config, result, unix_now()});
}

std::size_t MeasurementMemo::size() const {
  const std::lock_guard lock(mutex_);
  std::size_t only_earlier = 0;
  for (const auto& entry : earlier_) only_earlier += !results_.contains(entry.first);
  return results_.size() + only_earlier;
}

std::vector<MeasureResult> MeasureOnceBackend::measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  const std::string device = inner_->fingerprint();
  std::vector<MeasureResult> results(configs.size());
  std::vector<Config> todo;
  std::vector<std::size_t> todo_at;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const bool asked_before = !asked_.emplace(kernel.key(), configs[i]).second;
    std::optional<MeasureResult> known;
    if (!asked_before) known = memo_.find(device, kernel, space, configs[i]);
    if (known) {
      results[i] = std::move(*known);
      ++reused_;
    } else {
      todo.push_back(configs[i]);
      todo_at.push_back(i);
    }
  }
  if (todo.empty()) return results;
  std::vector<MeasureResult> measured = inner_->measure(kernel, space, todo);
  for (std::size_t j = 0; j < todo.size() && j < measured.size(); ++j) {
    memo_.add(device, kernel, space, todo[j], measured[j]);
    results[todo_at[j]] = std::move(measured[j]);
  }
  return results;
}

}  // namespace perftune
