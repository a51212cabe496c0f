#include "ir/settings_table.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace perftune {

std::string setting_number_text(double value) {
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) return std::to_string(static_cast<std::int64_t>(value));
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  // The shortest form that reads back the same (0.85, not 0.84999999999999998).
  for (int digits = 1; digits <= 17; ++digits) {
    char shorter[32];
    std::snprintf(shorter, sizeof shorter, "%.*g", digits, value);
    if (std::strtod(shorter, nullptr) == value) return shorter;
  }
  return text;
}

}  // namespace perftune
