#pragma once
// Each config of a kernel measured once for a whole live experiment: the runs of its strategies
// and seeds share one memo of what was measured (a record log in the experiment's folder), and a
// run that proposes a config another run measured reads that measurement, charged its recorded
// cost and one unit of budget as if measured again. Strategies are then compared on the same
// figures for the same configs (common random numbers, as a recorded space is), and the
// experiment, whose runs revisit the same good configs, takes a fraction of the machine time.
// Only results a second measurement would repeat are shared: ok, compile_error, invalid_config,
// wrong_result; a timeout or a runtime error is measured again. A config a run asks for a second
// time (the tuner's confirmation of a suspicious new best) is measured for real.
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "hardware/backend.h"
#include "ir/record_log.h"

namespace perftune {

// The shared memo: thread-safe; what an earlier sitting wrote to `path` is read back (a torn last
// line dropped), so a rerun of the experiment keeps it.
class MeasurementMemo {
 public:
  explicit MeasurementMemo(const std::string& path);

  std::optional<MeasureResult> find(const std::string& device, const Kernel& kernel, const SearchSpace& space,
                                    const Config& config) const;
  // Keeps `result` when a second measurement would repeat it (see above).
  void add(const std::string& device, const Kernel& kernel, const SearchSpace& space, const Config& config,
           const MeasureResult& result);
  std::size_t size() const;
  const std::string& path() const { return log_.path(); }

 private:
  static std::string key(const std::string& device, const std::string& kernel_key,
                         const std::vector<std::string>& knob_names, const Config& config);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, MeasureResult> results_;
  RecordLog log_;
};

class MeasureOnceBackend : public Backend {
 public:
  MeasureOnceBackend(std::unique_ptr<Backend> inner, MeasurementMemo& memo) : inner_(std::move(inner)), memo_(memo) {}

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) override;
  std::string fingerprint() const override { return inner_->fingerprint(); }
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) override { return inner_->measure_peers(kernel); }

  std::size_t reused() const { return reused_; }

 private:
  std::unique_ptr<Backend> inner_;
  MeasurementMemo& memo_;
  std::set<std::pair<std::string, Config>> asked_;  // (kernel key, config) this run asked for
  std::size_t reused_ = 0;
};

}  // namespace perftune
