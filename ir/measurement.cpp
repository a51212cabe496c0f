#include "ir/measurement.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <utility>

namespace perftune {

namespace {
constexpr std::array<std::pair<MeasureStatus, std::string_view>, 7> kStatusNames{{
    {MeasureStatus::kOk, "ok"},
    {MeasureStatus::kCompileError, "compile_error"},
    {MeasureStatus::kRuntimeError, "runtime_error"},
    {MeasureStatus::kTimeout, "timeout"},
    {MeasureStatus::kWrongResult, "wrong_result"},
    {MeasureStatus::kInvalidConfig, "invalid_config"},
    {MeasureStatus::kNotRecorded, "not_recorded"},
}};
}  // namespace

std::string_view status_name(MeasureStatus status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "unknown";
}

std::optional<MeasureStatus> parse_status(std::string_view name) {
  for (const auto& [s, n] : kStatusNames)
    if (n == name) return s;
  return std::nullopt;
}

MeasureResult MeasureResult::failure(MeasureStatus status, std::string message, double cost_seconds) {
  MeasureResult result;
  result.status = status;
  result.message = std::move(message);
  result.cost_seconds = cost_seconds;
  return result;
}

MeasureResult MeasureResult::from_repeats(std::vector<double> repeats, double cost_seconds) {
  MeasureResult result;
  result.repeats = repeats;
  result.cost_seconds = cost_seconds;
  if (repeats.empty()) return failure(MeasureStatus::kRuntimeError, "no repeats were measured", cost_seconds);
  std::sort(repeats.begin(), repeats.end());
  const std::size_t n = repeats.size();
  result.seconds = n % 2 ? repeats[n / 2] : 0.5 * (repeats[n / 2 - 1] + repeats[n / 2]);
  const double mean = std::accumulate(repeats.begin(), repeats.end(), 0.0) / static_cast<double>(n);
  double variance = 0.0;
  for (double r : repeats) variance += (r - mean) * (r - mean);
  variance /= static_cast<double>(n > 1 ? n - 1 : 1);
  result.spread = mean > 0 ? std::sqrt(variance) / mean : 0.0;
  return result;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", seconds);
  return text;
}

std::optional<std::string> runtime_problem(double seconds) {
  if (std::isnan(seconds)) return "a runtime is NaN";
  if (std::isinf(seconds)) return "a runtime is infinite";
  if (seconds < 0) return "a runtime is negative (" + seconds_text(seconds) + ")";
  if (seconds == 0) return "a runtime is 0 s (a measured runtime is above 0)";
  return std::nullopt;
}

std::optional<std::string> cost_problem(double seconds) {
  if (!std::isfinite(seconds)) return std::string("a cost is not finite");
  if (seconds < 0) return "a cost is negative (" + seconds_text(seconds) + ")";
  if (seconds > kMaxCostSeconds) return "a cost of " + seconds_text(seconds) + " is more than a week (" + seconds_text(kMaxCostSeconds) + ")";
  return std::nullopt;
}

std::optional<std::string> spread_problem(double spread) {
  if (!std::isfinite(spread)) return std::string("a spread is not finite");
  if (spread < 0) return "a spread (coefficient of variation) is negative (" + std::to_string(spread) + ")";
  if (spread > std::sqrt(kMaxRepeats)) {
    char text[128];
    std::snprintf(text, sizeof text, "a spread of %.3g is above %.3g, the most a coefficient of variation of %.0f repeats can be",
                  spread, std::sqrt(kMaxRepeats), kMaxRepeats);
    return std::string(text);
  }
  return std::nullopt;
}

std::optional<std::string> unix_time_problem(double seconds) {
  if (!std::isfinite(seconds)) return std::string("a time is not finite");
  if (seconds < 0) return "a time before 1970 (" + std::to_string(seconds) + " s since the Unix epoch)";
  if (seconds > kMaxUnixTime) return "a time after the year 3000 (" + std::to_string(seconds) + " s since the Unix epoch)";
  return std::nullopt;
}

}  // namespace perftune
