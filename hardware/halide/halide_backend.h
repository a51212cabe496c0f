#pragma once
// The live CPU backend: a real compiler (Halide 14) on this machine. For each config of a batch it
// asks a worker process (perftune_halide_runner, kept alive across measurements, restarted after a
// crash or a hang) to lower the kernel to a Halide pipeline, apply the config as a schedule
// (halide_schedule.h), JIT-compile it for this CPU, run it, and time it; the outputs are checked
// here against the reference interpreter. The same worker runs Halide's own autoschedulers on the
// same kernel (measure_autoscheduled), and a second worker (perftune_blas_runner) times the
// library reference; these are how campaigns measure their peers.
// A batch is compiled by several workers at once (compile_workers), then run and timed one
// config at a time: two measurements sharing the cores would disturb each other's timing.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hardware/backend.h"
#include "hardware/process/worker_process.h"
#include "hardware/reference/output_check.h"

namespace perftune {

struct BlasProblem;

struct HalideBackendOptions {
  int threads = 0;                       // Halide's thread pool; 0 = the machine's cores
  double run_timeout_seconds = 60;       // compile + warm-up + timing of one config; over it: timeout
  // The same for a kernel an autoscheduler schedules, its search included: 600 s, the compile
  // timeout of Adams2019's own autotuning loop (its beam search takes tens of seconds on a conv layer).
  double autoschedule_timeout_seconds = 600;
  // Repeats: each sample lasts >= min_sample_seconds (1 ms: ~1000x the steady_clock resolution);
  // stop at a robust CV (hardware/timing/sample_timer.h) <= target_cv after min_repeats, at max_repeats,
  // or after time_budget_seconds.
  int min_repeats = 5;
  int max_repeats = 30;
  double target_cv = 0.02;  // 2%: below the typical gap between neighbouring schedules
  double time_budget_seconds = 0.5;
  double min_sample_seconds = 1e-3;
  // A config whose warm-up run takes over this many times the best this backend has measured of
  // the kernel (and over 1 ms) is timed by that run alone: a tuner needs to know it is slow, not
  // by how much to 2%, and its repeats were half the machine time of a live experiment's
  // measurements. 0: every config timed in full.
  double single_run_above_best = 3.0;
  std::uint64_t seed = 1;  // input data (input_data.h)
  // The worker command (the thread count is appended); empty = the perftune_halide_runner built
  // with perftune.
  std::vector<std::string> runner;
  // The library reference's worker (blas_problem.h; the thread count is appended); empty = the
  // perftune_blas_runner built with perftune.
  std::vector<std::string> blas_runner;
  std::string scratch_dir;  // where the worker writes outputs; empty = $TMPDIR or /tmp
  // Workers that compile a batch at once, each keeping what it compiled; the batch then runs and
  // is timed one config at a time, so compiling never overlaps a timing. 0 = min(2, cores).
  int compile_workers = 0;
  // Address-space limit of each worker (RLIMIT_AS): a kernel that needs more fails as a
  // runtime_error instead of bringing in the OOM killer. 0 = half of the physical memory.
  std::uint64_t memory_limit_bytes = 0;
  // With several threads, a timing taken while the machine could not run them side by side is
  // taken again in the worker, up to this many attempts in all (hardware/timing/parallel_guard.h), and if
  // every attempt was disturbed, again in fresh workers (kFreshWorkerRetakes). 0 = no guard.
  int parallel_guard_attempts = 4;
};

// What the parallel guard did over a backend's timings.
struct ParallelGuardCounts {
  std::size_t timed = 0;      // timings the guard watched (retakes included)
  std::size_t retried = 0;    // of them, taken more than once in their worker
  std::size_t retaken = 0;    // configs disturbed at every attempt in a worker, taken again in fresh ones
  std::size_t disturbed = 0;  // configs disturbed to the end (the fastest figure kept)

  ParallelGuardCounts& operator+=(const ParallelGuardCounts& other) {
    timed += other.timed;
    retried += other.retried;
    retaken += other.retaken;
    disturbed += other.disturbed;
    return *this;
  }
};

// One of Halide's autoschedulers on a kernel: its name as Halide registers it ("Mullapudi2016",
// "Li2018", "Adams2019"), its machine parameters ("parallelism,cache bytes,balance"), and
// environment settings it reads (Adams2019: HL_SEED, HL_RANDOM_DROPOUT, HL_BEAM_SIZE).
struct AutoschedulerRun {
  std::string name;
  std::string machine;
  std::map<std::string, std::string> env;
};

// What an autoscheduler's schedule measured, and which schedule it was: a hash of the schedule
// source it wrote (empty when it wrote none), so that samples of one search can be told apart.
struct AutoscheduledMeasurement {
  MeasureResult result;
  std::string schedule;
};

class HalideBackend : public Backend {
 public:
  // Throws std::runtime_error if the runner does not exist.
  explicit HalideBackend(HalideBackendOptions options = {});

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  // "cpu:<model name>:halide14:<threads>t".
  std::string fingerprint() const override { return fingerprint_; }

  // The kernel scheduled by an autoscheduler instead of a config: compiled, checked and timed as
  // a config is, in a worker started for it (Adams2019 reads some settings once per process).
  AutoscheduledMeasurement measure_autoscheduled(const Kernel& kernel, const AutoschedulerRun& run);
  // Mullapudi2016, Li2018 and Adams2019, each run with Halide's generic machine parameters and
  // with this machine's, the faster kept (its settings say which); skipped (with a failed result
  // saying why) where a plugin is absent. Then, for a kernel with a dot or a convolution, the
  // library reference (measure_library).
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) override;
  // The kernel's dots (OpenBLAS) and convolutions (oneDNN) timed by torch with the same threads
  // and with one, the faster kept (blas_problem.h); nullopt for a kernel without them.
  std::optional<PeerMeasurement> measure_library(const Kernel& kernel);

  const HalideBackendOptions& options() const { return options_; }
  // Worker processes started so far (one per worker + restarts after crashes and timeouts).
  std::size_t worker_starts() const;
  const ParallelGuardCounts& parallel_guard_counts() const { return guard_counts_; }

 private:
  // One config compiled and run in one request on the first worker; an autoscheduler's schedule
  // hash to `schedule` when given.
  MeasureResult run(const Kernel& kernel, const nlohmann::json& request_schedule, bool autoscheduled, std::string* schedule = nullptr);
  // run() without the retakes; `disturbed` says whether the worker's every attempt was.
  MeasureResult run_once(const Kernel& kernel, const nlohmann::json& request_schedule, bool autoscheduled, std::string* schedule, bool* disturbed);
  // A config whose every timing attempt in a worker was disturbed, taken again in a fresh worker,
  // up to kFreshWorkerRetakes times: some disturbances last as long as the worker process. The
  // first undisturbed figure is kept, else the fastest; costs add up.
  static constexpr int kFreshWorkerRetakes = 2;
  // ... unless this many configs in a row stayed disturbed through their retakes (a busy machine):
  // then none is, until a quiet timing.
  static constexpr int kBusyAfterRetakes = 3;
  MeasureResult retaken_in_fresh_workers(const Kernel& kernel, const nlohmann::json& request_schedule, bool autoscheduled, MeasureResult disturbed,
                                         std::string* schedule = nullptr);
  // The retake loop of both a config (above) and the library reference: take_again(&disturbed)
  // measures once more in a fresh worker; on_kept, when given, is called when its result is kept.
  MeasureResult retaken(MeasureResult disturbed, const std::function<MeasureResult(bool* disturbed)>& take_again,
                        const std::function<void()>& on_kept = {});
  // The library reference on `threads` threads, retaken when disturbed.
  MeasureResult library_timing(const BlasProblem& problem, int threads);
  // ... timed once in a fresh perftune_blas_runner; `disturbed` as run_once's.
  MeasureResult library_once(const BlasProblem& problem, int threads, bool* disturbed);
  nlohmann::json compile_request(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled) const;
  nlohmann::json run_request(const Kernel& kernel) const;
  nlohmann::json timing_request() const;
  // What a request asked the worker to do: it words a timeout and says whether a run is checked.
  enum class Step { kCompile, kCompileAndRun, kAutoscheduleCompileAndRun };
  // A worker's reply as a result: its failure, or (kCompile) that it compiled, or the run's
  // outputs checked and its timings; an autoscheduler's schedule hash to `schedule` when given.
  // `disturbed`, when given, says whether the parallel guard found every attempt disturbed.
  MeasureResult result_of(const Kernel& kernel, const WorkerReply& reply, double cost, Step step, std::string* schedule = nullptr,
                          bool* disturbed = nullptr);

  HalideBackendOptions options_;
  std::string fingerprint_;
  std::string outputs_file_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;  // compile_workers of them; the first also runs peers
  WorkerProcess blas_worker_;
  ReferenceOutputs references_;
  std::unordered_map<std::string, double> best_seconds_;  // by kernel key: its fastest config so far
  ParallelGuardCounts guard_counts_;
  int machine_busy_retakes_ = 0;  // configs in a row disturbed through their retakes
};

// Halide's machine parameters for this machine: its cores, last-level cache and the balance 40
// that Halide's own MachineParams::generic() uses ("2,33554432,40").
std::string host_machine_params(int threads);
// MachineParams::generic() of Halide 14: "16,16777216,40".
inline constexpr const char* kGenericMachineParams = "16,16777216,40";

}  // namespace perftune
