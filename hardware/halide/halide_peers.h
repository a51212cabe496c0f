#pragma once
// The live CPU backend's peers, what a user of this machine would otherwise run on the same
// kernel: Halide's three autoschedulers at their best settings (autoscheduler_at_best.h) and the
// library (OpenBLAS and oneDNN through torch, hardware/library/), timed with the backend's own
// timing settings and retake policy (timed_runner.h).
#include <optional>
#include <vector>

#include "hardware/halide/compile_pool.h"
#include "hardware/halide/halide_options.h"
#include "hardware/halide/timed_runner.h"
#include "hardware/process/worker_process.h"

namespace perftune {

struct BlasProblem;

class HalidePeers {
 public:
  // The library's worker is started per timing, from options.blas_runner (checked when measured).
  HalidePeers(const HalideBackendOptions& options, HalideCompilePool& pool, HalideTimedRunner& runner);

  const HalideBackendOptions& options() const { return options_; }
  // The kernel scheduled by an autoscheduler instead of a config: compiled, checked and timed as
  // a config is, in a worker started for it (Adams2019 reads some settings once per process).
  AutoscheduledMeasurement measure_autoscheduled(const Kernel& kernel, const AutoschedulerRun& run);
  // Mullapudi2016, Li2018 and Adams2019 at their best settings, skipped (with a failed result
  // saying why) where a plugin is absent; then, for a kernel with a dot or a convolution, the library.
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel);
  // The kernel's dots (OpenBLAS) and convolutions (oneDNN) timed by torch with the same threads
  // and with one, the faster kept (blas_problem.h); nullopt for a kernel without them.
  std::optional<PeerMeasurement> measure_library(const Kernel& kernel);

 private:
  // The library reference on `threads` threads, retaken when disturbed.
  MeasureResult library_timing(const BlasProblem& problem, int threads);
  // ... timed once in a fresh perftune_blas_runner; `disturbed`: whether every attempt was.
  MeasureResult library_once(const BlasProblem& problem, int threads, bool* disturbed);

  const HalideBackendOptions& options_;
  HalideCompilePool& pool_;
  HalideTimedRunner& runner_;
  WorkerProcess blas_worker_;
};

}  // namespace perftune
