#pragma once
// The Halide workers of the live CPU backend, as a builder: a batch's configs compiled on every
// worker at once (compiling is single-threaded, and nothing is timed meanwhile), each pipeline kept
// in the worker that compiled it for the timed runner (timed_runner.h) to run. The first worker
// also compiles and runs single configs and the autoschedulers' schedules.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/halide/halide_options.h"
#include "hardware/process/worker_process.h"

namespace perftune {

// A pipeline a worker compiled and keeps, or why it does not.
struct KeptPipeline {
  std::size_t worker = 0, generation = 0;  // the worker, and which start of it holds the pipeline
  bool compiled = false;                   // false and no failure: its worker died before its turn
  std::optional<MeasureResult> failure;    // it did not compile
  double cost = 0;                         // the compile's seconds
};

class HalideCompilePool {
 public:
  // `command`: the worker's argv; `workers` of them (at least one).
  HalideCompilePool(const std::vector<std::string>& command, int workers);

  std::size_t size() const { return workers_.size(); }
  WorkerProcess& worker(std::size_t w) { return *workers_[w]; }
  WorkerProcess& first() { return *workers_.front(); }
  // Worker processes started so far (restarts after crashes and timeouts included).
  std::size_t worker_starts() const;

  // Compiles requests[t] (each with its "keep" id) on the workers at once, striped; one
  // KeptPipeline per request.
  std::vector<KeptPipeline> compile(const std::vector<nlohmann::json>& requests, const HalideBackendOptions& options);

 private:
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

}  // namespace perftune
