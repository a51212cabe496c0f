#pragma once
// What has been measured so far for one kernel, in measurement order. Strategies read it to
// avoid proposing a config twice and (model-free ones) to steer by measured runtimes.
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/corpus.h"

namespace perftune {

class History {
 public:
  // Appends a measurement. Throws std::logic_error if the config is already in the history:
  // the tuner must never measure a config twice.
  void add(Config config, MeasureResult result);

  bool contains(const Config& config) const { return index_.count(config) > 0; }
  // The measurement of `config`, or nullptr when it was never measured.
  const MeasureResult* find(const Config& config) const;
  const std::vector<Measurement>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // Index of the fastest ok measurement (the earliest on ties), if any.
  std::optional<std::size_t> best() const { return best_; }
  // Indices of the ok measurements, fastest first (ties by measurement order).
  std::vector<std::size_t> ranked_ok() const;

 private:
  std::vector<Measurement> entries_;
  std::unordered_map<Config, std::size_t, ConfigHash> index_;
  std::optional<std::size_t> best_;
};

}  // namespace perftune
