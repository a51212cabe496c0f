#include "hardware/halide_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "hardware/blas_problem.h"
#include "hardware/calibrate.h"
#include "hardware/halide_schedule.h"
#include "hardware/op_semantics.h"
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
  std::vector<std::string> argv = options.runner;
  argv.push_back(std::to_string(options.threads));
  return argv;
}

// Checked when the reference is measured, not here: a backend without it still tunes.
std::vector<std::string> blas_command(HalideBackendOptions& options) {
  if (options.blas_runner.empty()) options.blas_runner = {PERFTUNE_BLAS_RUNNER};
  std::vector<std::string> argv = options.blas_runner;
  argv.push_back(std::to_string(options.threads));
  return argv;
}

}  // namespace

HalideBackend::HalideBackend(HalideBackendOptions options)
    : options_(std::move(options)), worker_(worker_command(options_)), blas_worker_(blas_command(options_)) {
  fingerprint_ = "cpu:" + read_cpu_name() + ":halide14:" + std::to_string(options_.threads) + "t";
  outputs_file_ = scratch_folder(options_.scratch_dir) + "/perftune-halide." + std::to_string(::getpid()) + "." +
                  std::to_string(reinterpret_cast<std::uintptr_t>(this)) + ".out";
}

nlohmann::json HalideBackend::timing_request() const {
  return {{"min_repeats", options_.min_repeats},
          {"max_repeats", options_.max_repeats},
          {"target_cv", options_.target_cv},
          {"budget", options_.time_budget_seconds},
          {"min_sample", options_.min_sample_seconds}};
}

MeasureResult HalideBackend::run(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled) {
  nlohmann::json request = {{"program", program_to_json(kernel.body())},
                            {"seed", options_.seed},
                            {"outputs", outputs_file_},
                            {"timing", timing_request()}};
  request[autoscheduled ? "autoscheduler" : "schedule"] = schedule;
  std::error_code ignored;
  std::filesystem::remove(outputs_file_, ignored);
  const WorkerReply reply = worker_.request(request.dump(), options_.run_timeout_seconds);
  const double cost = reply.wall_seconds;
  if (reply.timed_out)
    return MeasureResult::failure(MeasureStatus::kTimeout,
                                  "compile and run took longer than " + std::to_string(options_.run_timeout_seconds) + " s", cost);
  if (!reply.line) return MeasureResult::failure(MeasureStatus::kRuntimeError, "Halide runner " + reply.failure, cost);
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(*reply.line);
  } catch (const nlohmann::json::exception&) {
    return MeasureResult::failure(MeasureStatus::kRuntimeError, "Halide runner answered something that is not JSON", cost);
  }
  const std::string status = answer.value("status", "");
  const std::string message = answer.value("message", "");
  if (status == "compile_error") return MeasureResult::failure(MeasureStatus::kCompileError, message, cost);
  if (status == "invalid_config") return MeasureResult::failure(MeasureStatus::kInvalidConfig, message, cost);
  if (status != "ok") return MeasureResult::failure(MeasureStatus::kRuntimeError, message.empty() ? "Halide runner failed" : message, cost);
  const std::vector<OpId> outputs = computed_outputs(kernel.body());
  const std::string problem = check_outputs(kernel, outputs, read_floats(outputs_file_), references_.of(kernel, outputs, options_.seed));
  std::filesystem::remove(outputs_file_, ignored);
  if (!problem.empty()) return MeasureResult::failure(MeasureStatus::kWrongResult, problem, cost);
  std::vector<double> repeats = answer.value("repeats", std::vector<double>{});
  if (repeats.empty()) return MeasureResult::failure(MeasureStatus::kRuntimeError, "Halide runner returned no timings", cost);
  return MeasureResult::from_repeats(std::move(repeats), cost);
}

std::vector<MeasureResult> HalideBackend::measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  std::vector<MeasureResult> results;
  for (const Config& config : configs) {
    if (!space.contains(config)) {
      results.push_back(MeasureResult::failure(MeasureStatus::kInvalidConfig, "config " + config.to_string() + " is not in the search space"));
      continue;
    }
    nlohmann::json schedule = nlohmann::json::object();
    for (const auto& [name, value] : named_knobs(space, config)) schedule[name] = value;
    results.push_back(run(kernel, schedule, false));
  }
  return results;
}

MeasureResult HalideBackend::measure_autoscheduled(const Kernel& kernel, const AutoschedulerRun& autoscheduler) {
  nlohmann::json spec = {{"name", autoscheduler.name}, {"machine", autoscheduler.machine}, {"env", autoscheduler.env}};
  return run(kernel, spec, true);
}

std::vector<PeerMeasurement> HalideBackend::measure_peers(const Kernel& kernel) {
  std::vector<PeerMeasurement> peers;
  const std::string host = host_machine_params(options_.threads);
  for (const char* name : {"Mullapudi2016", "Li2018", "Adams2019"}) {
    PeerMeasurement best{name, "", MeasureResult::failure(MeasureStatus::kRuntimeError, "not run")};
    for (const auto& [machine, label] : {std::pair{std::string(kGenericMachineParams), std::string("Halide's generic")},
                                         std::pair{host, std::string("this machine")}}) {
      const MeasureResult r = measure_autoscheduled(kernel, {name, machine, {}});
      const bool better = r.ok() && (!best.result.ok() || r.seconds < best.result.seconds);
      if (better || (!best.result.ok() && best.settings.empty())) best = {name, "machine " + machine + " (" + label + ")", r};
    }
    peers.push_back(std::move(best));
  }
  if (auto library = measure_library(kernel)) peers.push_back(std::move(*library));
  return peers;
}

std::optional<PeerMeasurement> HalideBackend::measure_library(const Kernel& kernel) {
  const std::optional<BlasProblem> problem = blas_problem(kernel);
  if (!problem) return std::nullopt;
  PeerMeasurement peer{problem->library, problem->calls + ", " + std::to_string(options_.threads) + " threads",
                       MeasureResult::failure(MeasureStatus::kRuntimeError, "not run")};
  if (!std::filesystem::exists(options_.blas_runner.front())) {
    peer.result.message = "the library runner " + options_.blas_runner.front() + " does not exist (build perftune_blas_runner)";
    return peer;
  }
  const nlohmann::json request = {{"calls", problem->request}, {"timing", timing_request()}};
  const WorkerReply reply = blas_worker_.request(request.dump(), options_.run_timeout_seconds);
  blas_worker_.stop();  // torch's thread pools stay out of the Halide worker's timings
  if (reply.timed_out) {
    peer.result = MeasureResult::failure(MeasureStatus::kTimeout, "the library call took longer than " + std::to_string(options_.run_timeout_seconds) + " s", reply.wall_seconds);
    return peer;
  }
  nlohmann::json answer = nlohmann::json::parse(reply.line.value_or(""), nullptr, false);
  std::vector<double> repeats;
  if (answer.is_object() && answer.value("status", "") == "ok") repeats = answer.value("repeats", std::vector<double>{});
  if (repeats.empty()) {
    const std::string why = !reply.line ? reply.failure : answer.is_object() ? answer.value("message", "no timings") : "an answer that is not JSON";
    peer.result = MeasureResult::failure(MeasureStatus::kRuntimeError, "BLAS runner: " + why, reply.wall_seconds);
    return peer;
  }
  peer.result = MeasureResult::from_repeats(std::move(repeats), reply.wall_seconds);
  return peer;
}

}  // namespace perftune
