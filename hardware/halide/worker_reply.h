#pragma once
// What a Halide worker's reply (halide/worker/halide_runner.cpp) says before its run is checked:
// a failure worded for the log, or the worker's answer when it reports success.
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "hardware/halide/halide_options.h"
#include "hardware/process/worker_process.h"

namespace perftune {

// What a request asked the worker to do: it words a timeout and says whether a run is checked.
enum class WorkerStep { kCompile, kCompileAndRun, kAutoscheduleCompileAndRun };

// A failure (charged `cost` seconds) or the answer object with "status": "ok". An
// autoscheduler's schedule hash goes to `schedule` when given, failed or not.
std::variant<MeasureResult, nlohmann::json> read_worker_reply(const WorkerReply& reply, double cost, WorkerStep step,
                                                              const HalideBackendOptions& options, std::string* schedule = nullptr);

}  // namespace perftune
