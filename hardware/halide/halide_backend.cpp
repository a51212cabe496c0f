#include "hardware/halide/halide_backend.h"

#include "hardware/halide/autoscheduler_at_best.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <thread>

#include "hardware/halide/halide_schedule.h"
#include "hardware/host_facts.h"
#include "hardware/library/blas_problem.h"
#include "hardware/reference/op_semantics.h"
#include "ir/program_json.h"

namespace perftune {

namespace {

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const auto bytes = static_cast<std::size_t>(in.tellg());
  std::vector<float> values(bytes / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(float)));
  return values;
}

std::string scratch_folder(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) return tmp;
  return "/tmp";
}

// The last-level cache (sysfs, as perftune calibrate reads it); 32 MiB if unknown.
std::uint64_t last_level_cache_bytes() {
  const CacheSizes caches = read_cache_sizes();
  const std::int64_t largest = std::max({caches.l1d, caches.l2, caches.l3});
  return largest > 0 ? static_cast<std::uint64_t>(largest) : std::uint64_t{32} << 20;
}

std::uint64_t half_of_physical_memory() {
  return static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 2;
}

int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

}  // namespace

std::string host_machine_params(int threads) {
  return std::to_string(threads > 0 ? threads : default_threads()) + "," + std::to_string(last_level_cache_bytes()) + ",40";
}

namespace {

std::vector<std::string> worker_command(HalideBackendOptions& options) {
  if (options.runner.empty()) options.runner = {PERFTUNE_HALIDE_RUNNER};
  if (options.threads <= 0) options.threads = default_threads();
  if (!std::filesystem::exists(options.runner.front()))
    throw std::runtime_error("the Halide runner " + options.runner.front() + " does not exist (build the perftune_halide_runner target)");
  if (options.memory_limit_bytes == 0) options.memory_limit_bytes = half_of_physical_memory();
  std::vector<std::string> argv = options.runner;
  argv.push_back(std::to_string(options.threads));
  argv.push_back(std::to_string(options.memory_limit_bytes));
  return argv;
}

// Checked when the reference is measured, not here: a backend without it still tunes.
std::vector<std::string> blas_command(HalideBackendOptions& options) {
  if (options.blas_runner.empty()) options.blas_runner = {PERFTUNE_BLAS_RUNNER};
  if (options.threads <= 0) options.threads = default_threads();
  std::vector<std::string> argv = options.blas_runner;
  argv.push_back(std::to_string(options.threads));
  return argv;
}

}  // namespace

HalideBackend::HalideBackend(HalideBackendOptions options) : options_(std::move(options)), blas_worker_(blas_command(options_)) {
  const std::vector<std::string> command = worker_command(options_);
  if (options_.compile_workers <= 0) options_.compile_workers = std::min(2, default_threads());
  for (int w = 0; w < options_.compile_workers; ++w) workers_.push_back(std::make_unique<WorkerProcess>(command));
  fingerprint_ = "cpu:" + read_cpu_name() + ":halide14:" + std::to_string(options_.threads) + "t";
  outputs_file_ = scratch_folder(options_.scratch_dir) + "/perftune-halide." + std::to_string(::getpid()) + "." +
                  std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".out";
}

std::size_t HalideBackend::worker_starts() const {
  std::size_t starts = 0;
  for (const auto& worker : workers_) starts += worker->starts();
  return starts;
}

nlohmann::json HalideBackend::timing_request() const {
  return {{"min_repeats", options_.min_repeats},
          {"max_repeats", options_.max_repeats},
          {"target_cv", options_.target_cv},
          {"budget", options_.time_budget_seconds},
          {"min_sample", options_.min_sample_seconds}};
}

nlohmann::json HalideBackend::compile_request(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled) const {
  nlohmann::json request = {{"program", program_to_json(kernel.body())}};
  request[autoscheduled ? "autoscheduler" : "schedule"] = schedule;
  return request;
}

nlohmann::json HalideBackend::run_request(const Kernel& kernel) const {
  nlohmann::json timing = timing_request();
  const auto best = best_seconds_.find(kernel.key());
  if (options_.single_run_above_best > 0 && best != best_seconds_.end())
    timing["single_above"] = std::max(options_.single_run_above_best * best->second, 1e-3);
  return {{"seed", options_.seed}, {"outputs", outputs_file_}, {"timing", std::move(timing)}, {"parallel_guard", options_.parallel_guard_attempts}};
}

MeasureResult HalideBackend::result_of(const Kernel& kernel, const WorkerReply& reply, double cost, Step step, std::string* schedule,
                                       bool* disturbed) {
  if (reply.timed_out) {
    const bool autoscheduled = step == Step::kAutoscheduleCompileAndRun;
    const char* what = step == Step::kCompile ? "compiling" : autoscheduled ? "the autoscheduler's search, compile and run" : "compile and run";
    const double timeout = autoscheduled ? options_.autoschedule_timeout_seconds : options_.run_timeout_seconds;
    return MeasureResult::failure(MeasureStatus::kTimeout, std::string(what) + " took longer than " + std::to_string(timeout) + " s", cost);
  }
  if (!reply.line) return MeasureResult::failure(MeasureStatus::kRuntimeError, "Halide runner " + reply.failure, cost);
  nlohmann::json answer = nlohmann::json::parse(*reply.line, nullptr, false);
  if (!answer.is_object()) return MeasureResult::failure(MeasureStatus::kRuntimeError, "Halide runner answered something that is not JSON", cost);
  if (schedule && answer.contains("schedule") && answer["schedule"].is_string()) *schedule = answer["schedule"];
  const std::string status = answer.value("status", "");
  const std::string message = answer.value("message", "");
  if (status == "compile_error") return MeasureResult::failure(MeasureStatus::kCompileError, message, cost);
  if (status == "invalid_config") return MeasureResult::failure(MeasureStatus::kInvalidConfig, message, cost);
  if (status != "ok") return MeasureResult::failure(MeasureStatus::kRuntimeError, message.empty() ? "Halide runner failed" : message, cost);
  if (step == Step::kCompile) {  // compiled; the run says the rest
    MeasureResult compiled;
    compiled.cost_seconds = cost;
    return compiled;
  }
  const std::vector<OpId> outputs = computed_outputs(kernel.body());
  const std::string problem = check_outputs(kernel, outputs, read_floats(outputs_file_), references_.of(kernel, outputs, options_.seed));
  std::error_code ignored;
  std::filesystem::remove(outputs_file_, ignored);
  if (!problem.empty()) return MeasureResult::failure(MeasureStatus::kWrongResult, problem, cost);
  std::vector<double> repeats = answer.value("repeats", std::vector<double>{});
  if (repeats.empty()) return MeasureResult::failure(MeasureStatus::kRuntimeError, "Halide runner returned no timings", cost);
  if (answer.contains("attempts")) {
    ++guard_counts_.timed;
    guard_counts_.retried += answer.value("attempts", 1) > 1;
    const bool all_disturbed = answer.value("disturbed", false);
    if (!all_disturbed) machine_busy_retakes_ = 0;
    if (disturbed) *disturbed = all_disturbed;
  }
  MeasureResult measured = MeasureResult::from_repeats(std::move(repeats), cost);
  if (!runtime_problem(measured.seconds)) {
    auto [best, first] = best_seconds_.try_emplace(kernel.key(), measured.seconds);
    if (!first) best->second = std::min(best->second, measured.seconds);
  }
  return measured;
}

MeasureResult HalideBackend::run(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled, std::string* schedule_hash) {
  bool disturbed = false;
  MeasureResult result = run_once(kernel, schedule, autoscheduled, schedule_hash, &disturbed);
  return disturbed ? retaken_in_fresh_workers(kernel, schedule, autoscheduled, std::move(result), schedule_hash) : result;
}

MeasureResult HalideBackend::retaken_in_fresh_workers(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled, MeasureResult kept,
                                                      std::string* schedule_hash) {
  std::string hash;
  return retaken(
      std::move(kept),
      [&](bool* disturbed) {
        workers_.front()->stop();
        return run_once(kernel, schedule, autoscheduled, &hash, disturbed);
      },
      [&] {
        if (schedule_hash) *schedule_hash = hash;
      });
}

MeasureResult HalideBackend::retaken(MeasureResult kept, const std::function<MeasureResult(bool* disturbed)>& take_again,
                                     const std::function<void()>& on_kept) {
  bool disturbed = true;
  // A machine disturbed through the last few retakes is busy, not flickering: retaking every
  // config would multiply the campaign's time for nothing, so the figure stands, flagged.
  const int retakes = machine_busy_retakes_ >= kBusyAfterRetakes ? 0 : kFreshWorkerRetakes;
  guard_counts_.retaken += retakes > 0;
  for (int retake = 0; retake < retakes && disturbed; ++retake) {
    disturbed = false;
    MeasureResult again = take_again(&disturbed);
    const double cost = kept.cost_seconds + again.cost_seconds;
    if (again.ok() && (!disturbed || !kept.ok() || again.seconds < kept.seconds)) {
      kept = std::move(again);
      if (on_kept) on_kept();
    }
    kept.cost_seconds = cost;
  }
  guard_counts_.disturbed += disturbed;
  machine_busy_retakes_ = disturbed ? machine_busy_retakes_ + 1 : 0;
  return kept;
}

MeasureResult HalideBackend::run_once(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled, std::string* schedule_hash,
                                      bool* disturbed) {
  nlohmann::json request = compile_request(kernel, schedule, autoscheduled);
  request.update(run_request(kernel));
  std::error_code ignored;
  std::filesystem::remove(outputs_file_, ignored);
  const double timeout = autoscheduled ? options_.autoschedule_timeout_seconds : options_.run_timeout_seconds;
  const WorkerReply reply = workers_.front()->request(request.dump(), timeout);
  return result_of(kernel, reply, reply.wall_seconds, autoscheduled ? Step::kAutoscheduleCompileAndRun : Step::kCompileAndRun, schedule_hash,
                   disturbed);
}

std::vector<MeasureResult> HalideBackend::measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  std::vector<MeasureResult> results(configs.size());
  std::vector<std::size_t> todo;
  std::vector<nlohmann::json> schedules(configs.size());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (!space.contains(configs[i])) {
      results[i] = MeasureResult::failure(MeasureStatus::kInvalidConfig, "config " + configs[i].to_string() + " is not in the search space");
      continue;
    }
    schedules[i] = nlohmann::json::object();
    for (const auto& [name, value] : named_knobs(space, configs[i])) schedules[i][name] = value;
    todo.push_back(i);
  }
  if (workers_.size() < 2 || todo.size() < 2) {
    for (std::size_t i : todo) results[i] = run(kernel, schedules[i], false);
    return results;
  }

  // Compile the batch on every worker at once (compiling is single-threaded; nothing is being
  // timed), keeping each pipeline in the worker that compiled it ...
  struct Kept {
    std::size_t worker = 0, generation = 0;  // the worker, and which start of it holds the pipeline
    bool compiled = false, failed = false;
    double cost = 0;
  };
  std::vector<Kept> kept(configs.size());
  // Those whose worker died before their turn compile and run on the way below.
  run_striped(workers_, todo.size(), [&](WorkerProcess& worker, std::size_t w, std::size_t t) {
    const std::size_t i = todo[t];
    nlohmann::json request = compile_request(kernel, schedules[i], false);
    request["keep"] = i;
    const WorkerReply reply = worker.request(request.dump(), options_.run_timeout_seconds);
    MeasureResult compiled = result_of(kernel, reply, reply.wall_seconds, Step::kCompile);
    kept[i] = {w, worker.starts(), compiled.ok(), !compiled.ok(), reply.wall_seconds};
    if (!compiled.ok()) results[i] = std::move(compiled);
  });
  // ... then run and time them one at a time. A pipeline whose worker died since (a crash or a
  // timeout of another config) is compiled and run again.
  for (std::size_t i : todo) {
    if (kept[i].failed) continue;
    WorkerProcess& worker = *workers_[kept[i].worker];
    if (!kept[i].compiled || !worker.running() || worker.starts() != kept[i].generation) {
      results[i] = run(kernel, schedules[i], false);
      continue;
    }
    nlohmann::json request = run_request(kernel);
    request["run"] = i;
    std::error_code ignored;
    std::filesystem::remove(outputs_file_, ignored);
    const WorkerReply reply = worker.request(request.dump(), options_.run_timeout_seconds);
    bool disturbed = false;
    results[i] = result_of(kernel, reply, kept[i].cost + reply.wall_seconds, Step::kCompileAndRun, nullptr, &disturbed);
    if (disturbed) {
      // A worker disturbed through every attempt may stay so for its life: it is restarted, and
      // what it still holds is compiled and run again in the first worker (above).
      worker.stop();
      results[i] = retaken_in_fresh_workers(kernel, schedules[i], false, std::move(results[i]));
    }
  }
  return results;
}

AutoscheduledMeasurement HalideBackend::measure_autoscheduled(const Kernel& kernel, const AutoschedulerRun& autoscheduler) {
  // Adams2019 reads HL_RANDOM_DROPOUT into a static on its first search in a process: in a worker
  // that ran another sample before, every later sample would search with that one's dropout.
  workers_.front()->stop();
  nlohmann::json spec = {{"name", autoscheduler.name}, {"machine", autoscheduler.machine}, {"env", autoscheduler.env}};
  AutoscheduledMeasurement measured;
  measured.result = run(kernel, spec, true, &measured.schedule);
  return measured;
}

std::vector<PeerMeasurement> HalideBackend::measure_peers(const Kernel& kernel) {
  std::vector<PeerMeasurement> peers;
  for (const char* name : {"Mullapudi2016", "Li2018", "Adams2019"}) peers.push_back(measure_autoscheduler_at_best(*this, kernel, name));
  if (auto library = measure_library(kernel)) peers.push_back(std::move(*library));
  return peers;
}

std::optional<PeerMeasurement> HalideBackend::measure_library(const Kernel& kernel) {
  const std::optional<BlasProblem> problem = blas_problem(kernel);
  if (!problem) return std::nullopt;
  PeerMeasurement peer{problem->library, problem->calls + ", " + std::to_string(options_.threads) + " threads",
                       MeasureResult::failure(MeasureStatus::kRuntimeError, "not run"), PeerMeasurement::Kind::kLibrary};
  if (!std::filesystem::exists(options_.blas_runner.front())) {
    peer.result.message = "the library runner " + options_.blas_runner.front() + " does not exist (build perftune_blas_runner)";
    return peer;
  }
  peer.result = library_timing(*problem, options_.threads);
  // The library at its best: a small convolution can run faster on one thread than on two (oneDNN
  // on conv_block_small's 1x8x16x16 by 16x8x3x3 did here), as a tuned config can run
  // serially, so the library is timed on one thread too and the faster kept, as the
  // autoschedulers' two machine parameters are.
  if (options_.threads > 1) {
    MeasureResult serial = library_timing(*problem, 1);
    const double cost = peer.result.cost_seconds + serial.cost_seconds;
    if (serial.ok() && (!peer.result.ok() || serial.seconds < peer.result.seconds)) {
      peer.result = std::move(serial);
      peer.settings = problem->calls + ", 1 thread (faster than " + std::to_string(options_.threads) + ")";
    }
    peer.result.cost_seconds = cost;
  }
  return peer;
}

MeasureResult HalideBackend::library_timing(const BlasProblem& problem, int threads) {
  // Each library timing runs in a fresh worker, so one disturbed at every attempt is retaken as a config's is.
  bool disturbed = false;
  MeasureResult result = library_once(problem, threads, &disturbed);
  if (!disturbed) return result;
  return retaken(std::move(result), [&](bool* again_disturbed) { return library_once(problem, threads, again_disturbed); });
}

MeasureResult HalideBackend::library_once(const BlasProblem& problem, int threads, bool* disturbed) {
  const nlohmann::json request = {
      {"calls", problem.request}, {"timing", timing_request()}, {"threads", threads}, {"parallel_guard", options_.parallel_guard_attempts}};
  const WorkerReply reply = blas_worker_.request(request.dump(), options_.run_timeout_seconds);
  blas_worker_.stop();  // torch's thread pools stay out of the Halide worker's timings
  if (reply.timed_out)
    return MeasureResult::failure(MeasureStatus::kTimeout, "the library call took longer than " + std::to_string(options_.run_timeout_seconds) + " s", reply.wall_seconds);
  nlohmann::json answer = nlohmann::json::parse(reply.line.value_or(""), nullptr, false);
  std::vector<double> repeats;
  if (answer.is_object() && answer.value("status", "") == "ok") repeats = answer.value("repeats", std::vector<double>{});
  if (repeats.empty()) {
    const std::string why = !reply.line ? reply.failure : answer.is_object() ? answer.value("message", "no timings") : "an answer that is not JSON";
    return MeasureResult::failure(MeasureStatus::kRuntimeError, "BLAS runner: " + why, reply.wall_seconds);
  }
  if (answer.contains("attempts")) {
    ++guard_counts_.timed;
    guard_counts_.retried += answer.value("attempts", 1) > 1;
    *disturbed = answer.value("disturbed", false);
  }
  return MeasureResult::from_repeats(std::move(repeats), reply.wall_seconds);
}

}  // namespace perftune
