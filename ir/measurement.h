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

// The one definition of a valid runtime, applied by every importer (Kernel Tuner cache, TPU
// data, TpuGraphs npz), the record log reader, runner replies and the tuner: finite and above 0
// (a kernel that takes no time was not measured). Empty when valid; else what is wrong with it.
std::optional<std::string> runtime_problem(double seconds);

// A measurement's hardware cost, in seconds, above which it is not believed: a week. No single
// compile-and-run takes that long, and budgets summed from such costs stay exact.
inline constexpr double kMaxCostSeconds = 7 * 24 * 3600.0;
// The one definition of a valid cost (finite, >= 0, <= kMaxCostSeconds), applied wherever a cost
// is read (record log, runner replies). Empty when valid; else what is wrong with it.
std::optional<std::string> cost_problem(double seconds);

// The one definition of a valid spread (a coefficient of variation, MeasureResult::spread):
// finite, >= 0 and at most sqrt(kMaxRepeats), since the sample CV of n values >= 0 is at most
// sqrt(n) (one value, the rest 0). The bound does not use a record's own repeats: a runner may
// compute its spread from more samples than it sends.
inline constexpr double kMaxRepeats = 1e6;  // no measurement repeats a config a million times
std::optional<std::string> spread_problem(double spread);

// A record's time of measurement (seconds since the Unix epoch) is finite and in [0, year 3000]:
// a negative or far-future time is a corrupt line, not a measurement.
inline constexpr double kMaxUnixTime = 32503680000.0;  // 3000-01-01T00:00:00Z
std::optional<std::string> unix_time_problem(double seconds);

// Seconds for messages, with significant digits whatever the scale: "-3e-07 s", "0.25 s".
std::string seconds_text(double seconds);

// Now, in seconds since the Unix epoch: a record's unix_time.
double unix_now();

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

// The runtime of a kernel as another scheduler schedules it by itself (one of Halide's
// autoschedulers, a BLAS library): a reference to score a model's pick against, with no config
// of the kernel's space (`measured.config` is empty).
struct ReferenceRecord {
  Record measured;
  std::string name;      // "Adams2019", "OpenBLAS", ...
  std::string settings;  // how it was run (machine parameters, threads)
};

}  // namespace perftune
