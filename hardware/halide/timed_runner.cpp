#include "hardware/halide/timed_runner.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <variant>
#include <vector>

#include "hardware/halide/halide_schedule.h"
#include "hardware/halide/worker_reply.h"
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

}  // namespace

HalideTimedRunner::HalideTimedRunner(const HalideBackendOptions& options, HalideCompilePool& pool, std::string outputs_file)
    : options_(options), pool_(pool), outputs_file_(std::move(outputs_file)) {}

void HalideTimedRunner::remove_outputs() const {
  std::error_code ignored;
  std::filesystem::remove(outputs_file_, ignored);
}

nlohmann::json HalideTimedRunner::timing_request() const {
  return {{"min_repeats", options_.min_repeats},
          {"max_repeats", options_.max_repeats},
          {"target_cv", options_.target_cv},
          {"budget", options_.time_budget_seconds},
          {"min_sample", options_.min_sample_seconds}};
}

nlohmann::json HalideTimedRunner::compile_request(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled) const {
  nlohmann::json request = {{"program", program_to_json(kernel.body())}};
  request[autoscheduled ? "autoscheduler" : "schedule"] = schedule;
  return request;
}

nlohmann::json HalideTimedRunner::run_request(const Kernel& kernel) const {
  nlohmann::json timing = timing_request();
  const auto best = best_seconds_.find(kernel.key());
  if (options_.single_run_above_best > 0 && best != best_seconds_.end())
    timing["single_above"] = std::max(options_.single_run_above_best * best->second, 1e-3);
  return {{"seed", options_.seed}, {"outputs", outputs_file_}, {"timing", std::move(timing)}, {"parallel_guard", options_.parallel_guard_attempts}};
}

void HalideTimedRunner::count_guard(const nlohmann::json& answer, bool* disturbed, bool quiet_ends_busy) {
  if (!answer.contains("attempts")) return;
  ++guard_counts_.timed;
  guard_counts_.retried += answer.value("attempts", 1) > 1;
  const bool all_disturbed = answer.value("disturbed", false);
  if (quiet_ends_busy && !all_disturbed) machine_busy_retakes_ = 0;
  if (disturbed) *disturbed = all_disturbed;
}

MeasureResult HalideTimedRunner::result_of_run(const Kernel& kernel, const WorkerReply& reply, double cost, bool autoscheduled,
                                               std::string* schedule_hash, bool* disturbed) {
  auto read = read_worker_reply(reply, cost, autoscheduled ? WorkerStep::kAutoscheduleCompileAndRun : WorkerStep::kCompileAndRun, options_,
                                schedule_hash);
  if (auto* failure = std::get_if<MeasureResult>(&read)) return std::move(*failure);
  const nlohmann::json& answer = std::get<nlohmann::json>(read);
  const std::vector<OpId> outputs = computed_outputs(kernel.body());
  const std::string problem = check_outputs(kernel, outputs, read_floats(outputs_file_), references_.of(kernel, outputs, options_.seed));
  remove_outputs();
  if (!problem.empty()) return MeasureResult::failure(MeasureStatus::kWrongResult, problem, cost);
  std::vector<double> repeats = answer.value("repeats", std::vector<double>{});
  if (repeats.empty()) return MeasureResult::failure(MeasureStatus::kRuntimeError, "Halide runner returned no timings", cost);
  count_guard(answer, disturbed, true);
  MeasureResult measured = MeasureResult::from_repeats(std::move(repeats), cost);
  if (!runtime_problem(measured.seconds)) {
    auto [best, first] = best_seconds_.try_emplace(kernel.key(), measured.seconds);
    if (!first) best->second = std::min(best->second, measured.seconds);
  }
  return measured;
}

MeasureResult HalideTimedRunner::compile_and_run(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled,
                                                 std::string* schedule_hash) {
  bool disturbed = false;
  MeasureResult result = compile_and_run_once(kernel, schedule, autoscheduled, schedule_hash, &disturbed);
  return disturbed ? retaken_in_fresh_workers(kernel, schedule, autoscheduled, std::move(result), schedule_hash) : result;
}

MeasureResult HalideTimedRunner::compile_and_run_once(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled,
                                                      std::string* schedule_hash, bool* disturbed) {
  nlohmann::json request = compile_request(kernel, schedule, autoscheduled);
  request.update(run_request(kernel));
  remove_outputs();
  const double timeout = autoscheduled ? options_.autoschedule_timeout_seconds : options_.run_timeout_seconds;
  const WorkerReply reply = pool_.first().request(request.dump(), timeout);
  return result_of_run(kernel, reply, reply.wall_seconds, autoscheduled, schedule_hash, disturbed);
}

MeasureResult HalideTimedRunner::run_kept(const Kernel& kernel, const nlohmann::json& schedule, std::size_t keep_id, const KeptPipeline& kept) {
  WorkerProcess& worker = pool_.worker(kept.worker);
  if (!kept.compiled || !worker.running() || worker.starts() != kept.generation) return compile_and_run(kernel, schedule, false);
  nlohmann::json request = run_request(kernel);
  request["run"] = keep_id;
  remove_outputs();
  const WorkerReply reply = worker.request(request.dump(), options_.run_timeout_seconds);
  bool disturbed = false;
  MeasureResult result = result_of_run(kernel, reply, kept.cost + reply.wall_seconds, false, nullptr, &disturbed);
  if (!disturbed) return result;
  // A worker disturbed through every attempt may stay so for its life: it is restarted, and what
  // it still holds is compiled and run again in the first worker.
  worker.stop();
  return retaken_in_fresh_workers(kernel, schedule, false, std::move(result));
}

MeasureResult HalideTimedRunner::retaken_in_fresh_workers(const Kernel& kernel, const nlohmann::json& schedule, bool autoscheduled,
                                                          MeasureResult kept, std::string* schedule_hash) {
  std::string hash;
  return retaken(
      std::move(kept),
      [&](bool* disturbed) {
        pool_.first().stop();
        return compile_and_run_once(kernel, schedule, autoscheduled, &hash, disturbed);
      },
      [&] {
        if (schedule_hash) *schedule_hash = hash;
      });
}

MeasureResult HalideTimedRunner::retaken(MeasureResult kept, const std::function<MeasureResult(bool* disturbed)>& take_again,
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

}  // namespace perftune
