#pragma once
// How a run's summary writes its numbers: a missing figure as null, a time for a person to read.
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace perftune {

inline nlohmann::ordered_json optional_number(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

// "1.234 s", "12.34 ms" or "123.4 us", four significant digits.
inline std::string format_seconds(double seconds) {
  std::ostringstream out;
  out << std::setprecision(4);
  if (seconds >= 1) out << seconds << " s";
  else if (seconds >= 1e-3) out << seconds * 1e3 << " ms";
  else out << seconds * 1e6 << " us";
  return out.str();
}

}  // namespace perftune
