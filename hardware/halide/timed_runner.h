#pragma once
// Runs and times the live CPU backend's pipelines in its Halide workers (compile_pool.h), and owns
// what a timing is worth: the outputs checked against the reference interpreter, the parallel
// guard's counts, and the retake policy. A config disturbed at every attempt in a worker is taken
// again in a fresh worker, up to kFreshWorkerRetakes times (some disturbances last as long as the
// worker process); the first undisturbed figure is kept, else the fastest, and costs add up.
#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "hardware/halide/compile_pool.h"
#include "hardware/halide/halide_options.h"
#include "hardware/reference/output_check.h"
#include "ir/kernel.h"

namespace perftune {

class HalideTimedRunner {
 public:
  // `outputs_file`: where the workers write a run's outputs for the check.
  HalideTimedRunner(const HalideBackendOptions& options, HalideCompilePool& pool, std::string outputs_file);

  // One config (or an autoscheduler's spec) compiled and run in one request on the pool's first
  // worker, retaken when disturbed; an autoscheduler's schedule hash to `schedule_hash` when given.
  MeasureResult compile_and_run(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled, std::string* schedule_hash = nullptr);
  // A pipeline the pool compiled and kept under `keep_id`, run and timed in its worker; compiled
  // and run again (compile_and_run) when that worker died since.
  MeasureResult run_kept(const Kernel& kernel, const nlohmann::json& schedule, std::size_t keep_id, const KeptPipeline& kept);

  // The retake loop of any timing (the library reference's too): take_again(&disturbed) measures
  // once more in a fresh worker; on_kept, when given, is called when its result is kept.
  MeasureResult retaken(MeasureResult disturbed, const std::function<MeasureResult(bool* disturbed)>& take_again,
                        const std::function<void()>& on_kept = {});
  // Counts a worker's parallel-guard report (an answer with "attempts") and writes to `disturbed`
  // whether every attempt was; `quiet_ends_busy`: an undisturbed timing ends a busy spell.
  void count_guard(const nlohmann::json& answer, bool* disturbed, bool quiet_ends_busy);
  const ParallelGuardCounts& guard_counts() const { return guard_counts_; }
  // The timing settings of a request ("timing"), as the workers read them.
  nlohmann::json timing_request() const;
  nlohmann::json compile_request(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled) const;

  static constexpr int kFreshWorkerRetakes = 2;
  // ... unless this many configs in a row stayed disturbed through their retakes (a busy machine):
  // then none is, until a quiet timing.
  static constexpr int kBusyAfterRetakes = 3;

 private:
  nlohmann::json run_request(const Kernel& kernel) const;
  // compile_and_run without the retakes; `disturbed`: whether the worker's every attempt was.
  MeasureResult compile_and_run_once(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled, std::string* schedule_hash,
                                     bool* disturbed);
  MeasureResult retaken_in_fresh_workers(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled, MeasureResult disturbed,
                                         std::string* schedule_hash = nullptr);
  // A run's reply as a result: its failure, or its outputs checked and its timings.
  MeasureResult result_of_run(const Kernel& kernel, const WorkerReply& reply, double cost, bool autoscheduled, std::string* schedule_hash,
                              bool* disturbed);
  void remove_outputs() const;

  const HalideBackendOptions& options_;
  HalideCompilePool& pool_;
  std::string outputs_file_;
  ReferenceOutputs references_;
  std::unordered_map<std::string, double> best_seconds_;  // by kernel key: its fastest config so far
  ParallelGuardCounts guard_counts_;
  int machine_busy_retakes_ = 0;  // configs in a row disturbed through their retakes
};

}  // namespace perftune
