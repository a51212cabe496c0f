#pragma once
// The live CPU backend: a real compiler (Halide 14) on this machine. For each config of a batch it
// asks a worker process (perftune_halide_runner, kept alive across measurements, restarted after a
// crash or a hang) to lower the kernel to a Halide pipeline, apply the config as a schedule
// (halide_schedule.h), JIT-compile it for this CPU, run it, and time it; the outputs are checked
// here against the reference interpreter. The same worker runs Halide's own autoschedulers on the
// same kernel (measure_autoscheduled), and a second worker (perftune_blas_runner) times the
// library reference; these are how campaigns measure their peers.
// A batch is compiled by several workers at once (compile_workers, compile_pool.h), then run and
// timed one config at a time (timed_runner.h): two measurements sharing the cores would disturb
// each other's timing. The backend composes those parts and its peers (halide_peers.h).
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hardware/backend.h"
#include "hardware/halide/compile_pool.h"
#include "hardware/halide/halide_options.h"
#include "hardware/halide/halide_peers.h"
#include "hardware/halide/timed_runner.h"

namespace perftune {

class HalideBackend : public Backend {
 public:
  // Throws std::runtime_error if the runner does not exist.
  explicit HalideBackend(HalideBackendOptions options = {});

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  // "cpu:<model name>:halide14:<threads>t".
  std::string fingerprint() const override { return fingerprint_; }
  // Halide's autoschedulers and the library on the kernel (halide_peers.h).
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) override { return peers_.measure_peers(kernel); }
  AutoscheduledMeasurement measure_autoscheduled(const Kernel& kernel, const AutoschedulerRun& run) {
    return peers_.measure_autoscheduled(kernel, run);
  }
  std::optional<PeerMeasurement> measure_library(const Kernel& kernel) { return peers_.measure_library(kernel); }
  HalidePeers& peers() { return peers_; }

  // The options with their defaults resolved (threads, runners, workers, memory limit).
  const HalideBackendOptions& options() const { return options_; }
  // Worker processes started so far (one per worker + restarts after crashes and timeouts).
  std::size_t worker_starts() const { return pool_.worker_starts(); }
  const ParallelGuardCounts& parallel_guard_counts() const { return runner_.guard_counts(); }

 private:
  HalideBackendOptions options_;
  std::string fingerprint_;
  HalideCompilePool pool_;
  HalideTimedRunner runner_;
  HalidePeers peers_;
};

}  // namespace perftune
