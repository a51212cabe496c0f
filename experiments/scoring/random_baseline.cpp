#include "experiments/scoring/random_baseline.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace perftune {

double RecordedValues::median() const {
  const std::size_t n = ok_sorted.size();
  return n % 2 ? ok_sorted[n / 2] : 0.5 * (ok_sorted[n / 2 - 1] + ok_sorted[n / 2]);
}

RecordedValues recorded_values(const MeasuredKernel& kernel) {
  RecordedValues values;
  double cost = 0.0;
  for (const Measurement* m : kernel.first_recordings()) {
    if (m->result.ok()) values.ok_sorted.push_back(m->result.seconds);
    else ++values.failed;
    cost += m->result.cost_seconds;
  }
  if (values.size() > 0) values.mean_cost_seconds = cost / static_cast<double>(values.size());
  if (values.ok_sorted.empty())
    throw std::invalid_argument("kernel " + kernel.kernel.name() + " on '" + kernel.device +
                                "' has no valid measurement: no baseline to compare against");
  std::sort(values.ok_sorted.begin(), values.ok_sorted.end());
  return values;
}

double expected_random_best(const RecordedValues& values, std::size_t b) {
  if (b == 0) throw std::invalid_argument("expected_random_best: a budget of zero draws has no best");
  const std::size_t n = values.size();
  b = std::min(b, n);
  // ratio = C(N-i, b-1) / C(N, b): the probability that the i-th fastest is the best drawn.
  double ratio = static_cast<double>(b) / static_cast<double>(n);
  double expected = 0.0;
  for (std::size_t i = 1; i <= values.ok_sorted.size() && ratio > 0.0; ++i) {
    expected += values.ok_sorted[i - 1] * ratio;
    if (n - i < b) break;  // C(N-i-1, b-1) = 0 from here on
    ratio *= static_cast<double>(n - i - b + 1) / static_cast<double>(n - i);
  }
  // C(F, b) / C(N, b): every draw failed.
  double all_failed = 1.0;
  for (std::size_t j = 0; j < b && all_failed > 0.0; ++j)
    all_failed *= j < values.failed ? static_cast<double>(values.failed - j) / static_cast<double>(n - j) : 0.0;
  return expected + all_failed * values.no_runtime_value();
}

std::optional<double> standardized_score(double f_random, double f_strategy, double f_opt) {
  const double span = f_random - f_opt;
  // Relative to the runtimes: below 1e-12 of f_opt the difference is rounding, not search.
  if (!(span > 1e-12 * std::abs(f_opt))) return std::nullopt;
  return (f_random - f_strategy) / span;
}

}  // namespace perftune
