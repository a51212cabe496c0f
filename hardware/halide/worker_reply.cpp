#include "hardware/halide/worker_reply.h"

namespace perftune {

std::variant<MeasureResult, nlohmann::json> read_worker_reply(const WorkerReply& reply, double cost, WorkerStep step,
                                                              const HalideBackendOptions& options, std::string* schedule) {
  if (reply.timed_out) {
    const bool autoscheduled = step == WorkerStep::kAutoscheduleCompileAndRun;
    const char* what = step == WorkerStep::kCompile ? "compiling" : autoscheduled ? "the autoscheduler's search, compile and run" : "compile and run";
    const double timeout = autoscheduled ? options.autoschedule_timeout_seconds : options.run_timeout_seconds;
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
  return answer;
}

}  // namespace perftune
