#include "hardware/halide/halide_peers.h"

#include <filesystem>
#include <string>

#include "hardware/halide/autoscheduler_at_best.h"
#include "hardware/library/blas_problem.h"

namespace perftune {

namespace {

std::vector<std::string> blas_command(const HalideBackendOptions& options) {
  std::vector<std::string> argv = options.blas_runner;
  argv.push_back(std::to_string(options.threads));
  return argv;
}

}  // namespace

HalidePeers::HalidePeers(const HalideBackendOptions& options, HalideCompilePool& pool, HalideTimedRunner& runner)
    : options_(options), pool_(pool), runner_(runner), blas_worker_(blas_command(options)) {}

AutoscheduledMeasurement HalidePeers::measure_autoscheduled(const Kernel& kernel, const AutoschedulerRun& autoscheduler) {
  // Adams2019 reads HL_RANDOM_DROPOUT into a static on its first search in a process: in a worker
  // that ran another sample before, every later sample would search with that one's dropout.
  pool_.first().stop();
  nlohmann::json spec = {{"name", autoscheduler.name}, {"machine", autoscheduler.machine}, {"env", autoscheduler.env}};
  AutoscheduledMeasurement measured;
  measured.result = runner_.compile_and_run(kernel, spec, true, &measured.schedule);
  return measured;
}

std::vector<PeerMeasurement> HalidePeers::measure_peers(const Kernel& kernel) {
  std::vector<PeerMeasurement> peers;
  for (const char* name : {"Mullapudi2016", "Li2018", "Adams2019"}) peers.push_back(measure_autoscheduler_at_best(*this, kernel, name));
  if (auto library = measure_library(kernel)) peers.push_back(std::move(*library));
  return peers;
}

std::optional<PeerMeasurement> HalidePeers::measure_library(const Kernel& kernel) {
  const std::optional<BlasProblem> problem = blas_problem(kernel);
  if (!problem) return std::nullopt;
  PeerMeasurement peer{problem->library, problem->calls + ", " + std::to_string(options_.threads) + " threads",
                       MeasureResult::failure(MeasureStatus::kRuntimeError, "not run"), PeerMeasurement::Kind::kLibrary};
  if (!std::filesystem::exists(options_.blas_runner.front())) {
    peer.result.message = "the library runner " + options_.blas_runner.front() + " does not exist (build perftune_blas_runner)";
    return peer;
  }
  peer.result = library_timing(*problem, options_.threads);
  // The library at its best: a small convolution can run faster on one thread than on two, as a
  // tuned config can run serially, so the library is timed on one thread too and the faster
  // kept, as the autoschedulers' two machine parameters are.
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

MeasureResult HalidePeers::library_timing(const BlasProblem& problem, int threads) {
  // Each library timing runs in a fresh worker, so one disturbed at every attempt is retaken as a config's is.
  bool disturbed = false;
  MeasureResult result = library_once(problem, threads, &disturbed);
  if (!disturbed) return result;
  return runner_.retaken(std::move(result), [&](bool* again_disturbed) { return library_once(problem, threads, again_disturbed); });
}

MeasureResult HalidePeers::library_once(const BlasProblem& problem, int threads, bool* disturbed) {
  const nlohmann::json request = {
      {"calls", problem.request}, {"timing", runner_.timing_request()}, {"threads", threads}, {"parallel_guard", options_.parallel_guard_attempts}};
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
  // A quiet library timing leaves the busy count alone: only the configs' timings reset it.
  runner_.count_guard(answer, disturbed, false);
  return MeasureResult::from_repeats(std::move(repeats), reply.wall_seconds);
}

}  // namespace perftune
