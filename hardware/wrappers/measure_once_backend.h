#pragma once
// Each config of a kernel measured once in a sitting of a live experiment: the runs of its strategies
// and seeds share one memo of what was measured (a record log in the experiment's folder), and a
// run that proposes a config another run measured reads that measurement, charged its recorded
// cost and one unit of budget as if measured again. Strategies are then compared on the same
// figures for the same configs (common random numbers, as a recorded space is), and the
// experiment, whose runs revisit the same good configs, takes a fraction of the machine time.
// Only results a second measurement would repeat are shared: ok, compile_error, invalid_config,
// wrong_result; a timeout or a runtime error is measured again. A config a run asks for a second
// time (the tuner's confirmation of a suspicious new best) is measured for real.
// A sitting is one process: this machine's runtimes drift between sittings (halide_live's memo,
// filled over many sittings, against the same configs measured again in one), more than the
// margins between good configs, so figures from other
// sittings would rank configs by when they were measured. A config measured only in an earlier
// sitting is measured again, its new figure appended and served for the rest of this one.
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

// Which figures the memo serves: those measured in this sitting (process), or every sitting's
// (each config's first figure, for quick comparisons that trade the drift for machine time).
enum class MemoScope { kSitting, kExperiment };

// The shared memo: thread-safe; what earlier sittings wrote to `path` is read back (a torn last
// line dropped) and served when `scope` is kExperiment.
class MeasurementMemo {
 public:
  explicit MeasurementMemo(const std::string& path, MemoScope scope = MemoScope::kSitting);

  std::optional<MeasureResult> find(const std::string& device, const Kernel& kernel, const SearchSpace& space,
                                    const Config& config) const;
  // Keeps `result` when a second measurement would repeat it (see above).
  void add(const std::string& device, const Kernel& kernel, const SearchSpace& space, const Config& config,
           const MeasureResult& result);
  // Configs with a figure, from any sitting.
  std::size_t size() const;
  MemoScope scope() const { return scope_; }
  const std::string& path() const { return log_.path(); }

 private:
  static std::string key(const std::string& device, const std::string& kernel_key,
                         const std::vector<std::string>& knob_names, const Config& config);
  // The figure `find` serves for key `k` (caller holds the lock), or null.
  const MeasureResult* served(const std::string& k) const;

  MemoScope scope_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, MeasureResult> earlier_;  // earlier sittings' first figures
  std::unordered_map<std::string, MeasureResult> results_;  // this sitting's
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
