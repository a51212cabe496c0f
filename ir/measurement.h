#pragma once
// What a measurement returns. Failures are data: they carry a status and a message and are
// logged like successes, never thrown through the tuning loop.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/config.h"

namespace perftune {

enum class MeasureStatus {
  kOk,
  kCompileError,
  kRuntimeError,
  kTimeout,
  kWrongResult,
  kInvalidConfig,
  kNotRecorded,
};

std::string_view status_name(MeasureStatus status);  // "ok", "compile_error", ...
std::optional<MeasureStatus> parse_status(std::string_view name);

struct MeasureResult {
  MeasureStatus status = MeasureStatus::kOk;
  double seconds = NAN;           // median of the repeats; NaN unless ok
  double spread = 0.0;            // coefficient of variation of the repeats
  std::vector<double> repeats;    // seconds, as measured
  double cost_seconds = 0.0;      // hardware time the measurement took (compile + run)
  std::string message;            // why it failed, for humans

  bool ok() const { return status == MeasureStatus::kOk; }
  static MeasureResult failure(MeasureStatus status, std::string message, double cost_seconds = 0.0);
  // Median and coefficient of variation from `repeats` (seconds, at least one).
  static MeasureResult from_repeats(std::vector<double> repeats, double cost_seconds);
};

// Empty when `seconds` is a valid runtime; else what is wrong with it (NaN, infinite, negative).
std::optional<std::string> runtime_problem(double seconds);

// One measured config of one kernel on one device: a line of the record log.
struct Record {
  std::string device;       // backend fingerprint: device + version
  std::string kernel_key;   // Kernel::key()
  std::string kernel_name;  // for humans
  std::vector<std::string> knob_names;
  Config config;
  MeasureResult result;
  double unix_time = 0.0;  // when it was measured
};

}  // namespace perftune
