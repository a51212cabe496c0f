#pragma once
// The live CPU backend's settings (halide_backend_json.h reads them from a config), what its
// parallel guard counted, and how an autoscheduler is asked to run: shared by the backend and its
// parts (compile_pool.h, timed_runner.h, halide_peers.h).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hardware/backend.h"

namespace perftune {

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
  // every attempt was disturbed, again in fresh workers (timed_runner.h). 0 = no guard.
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

// Halide's machine parameters for this machine: its cores, last-level cache and the balance 40
// that Halide's own MachineParams::generic() uses ("2,33554432,40").
std::string host_machine_params(int threads);
// MachineParams::generic() of Halide 14: "16,16777216,40".
inline constexpr const char* kGenericMachineParams = "16,16777216,40";

}  // namespace perftune
