#pragma once
// The random-search baseline of a recorded space, computed exactly rather than simulated (after
// Kernel Tuner's methodology for comparing optimization algorithms, Willemsen et al. 2024), and
// the standardized score that puts every strategy on one scale.
//
// Failed configs: random search draws from the whole recorded space, failures included, so they
// stay in the draw. A run whose draws have all failed has no runtime yet; it is charged the
// slowest valid runtime of the space (`no_runtime_value`), for random search and for every
// strategy alike, so the failure share weighs the same on both sides of the score.
#include <cstddef>
#include <optional>
#include <vector>

#include "ir/corpus.h"

namespace perftune {

struct RecordedValues {
  std::vector<double> ok_sorted;  // valid runtimes (seconds), ascending
  std::size_t failed = 0;         // recorded configs that failed
  // The mean hardware seconds charged per recorded config, failed ones included (what one draw of
  // random search costs on average; the time-axis score's unit, time_axis_score.h). 0: unknown.
  double mean_cost_seconds = 0.0;

  std::size_t size() const { return ok_sorted.size() + failed; }
  double optimum() const { return ok_sorted.front(); }
  // What a run that has found no valid runtime yet is charged: the slowest valid runtime.
  double no_runtime_value() const { return ok_sorted.back(); }
  // The median of the valid runtimes (the speedup reference when a space has no default).
  double median() const;
};

// The first recording of each config of `kernel` (replay serves the first, so duplicates after
// it are ignored). Throws std::invalid_argument when no measurement is valid.
RecordedValues recorded_values(const MeasuredKernel& kernel);

// E[best of b draws without replacement] over the N = ok + failed recorded configs: with
// v_1 <= ... <= v_M the valid runtimes and failures ordered after them,
//   E = sum_i v_i C(N-i, b-1) / C(N, b) + no_runtime_value * C(F, b) / C(N, b),
// evaluated with running ratios (no factorials): C(N-1,b-1)/C(N,b) = b/N and each next term is
// the last times (N-i-b+1)/(N-i). b is clamped to [1, N]. Throws std::invalid_argument for b = 0.
double expected_random_best(const RecordedValues& values, std::size_t b);

// P = (f_random - f_strategy) / (f_random - f_opt): 0 = random search, 1 = the optimum, negative
// = worse than random. Empty when random search is already optimal (f_random == f_opt: nothing to
// standardize against).
std::optional<double> standardized_score(double f_random, double f_strategy, double f_opt);

}  // namespace perftune
