#pragma once
// Guarding the result against a too-fast measurement (a broken timer, a kernel that skipped its
// work once): a would-be new best that nothing vouches for is re-measured three times, and the
// median of those three replaces it before the tuner believes it.
//
// Suspicious means much faster than the evidence at hand: than an absolute-time model's prediction
// (kModelSuspicionFactor), than its fastest measured neighbour (a config one knob away; kNeighbour-
// SuspicionFactor), or, with neither, simply unvouched. The suspicious first measurement is set
// aside, not voted: it was picked for being extreme, so only fresh measurements may settle it. A
// false best then survives only when two of three re-measurements fail the same way (about 3p^2
// for a fault rate p: 3% at p = 0.1), where one confirming re-measurement let 1 in ~p through.
//
// Close means within a margin of the best so far (ConfirmationPolicy::close_margin): on a shared
// CPU one figure of a config is 6% below its own median 1 time in 20 (halide_live's re-measure,
// three fresh figures of 1,300 configs), and a tuner that keeps whichever figure is lowest ends on
// the luckiest of its near-ties rather than the fastest config. A close challenger is settled the
// same way, by the median of three fresh figures, so the best it is compared with was settled so
// too (or won by more than the margin).
#include <cstddef>
#include <functional>
#include <vector>

#include "ir/kernel.h"
#include "ir/measurement.h"
#include "ir/search_space.h"
#include "search/history.h"
#include "surrogate/cost_model.h"

namespace perftune {

// The fastest measured neighbour vouches for a time when it is at most this much slower. Measured
// on the shared Kernel Tuner recordings (146k configs: gemm, convolution, dedispersion, 12 GPUs):
// every config's fastest one-knob neighbour is within 2.0x of it; one random neighbour is more
// than 4x slower for 0.46% of configs, so a genuine best is rarely re-measured for no reason.
inline constexpr double kNeighbourSuspicionFactor = 4.0;
// An absolute-time model (the analytical roofline) vouches within an order of magnitude: wider
// than its errors on real kernels, still 10x short of a 100x-too-fast time.
inline constexpr double kModelSuspicionFactor = 10.0;
// Re-measurements of a suspicious best; their median is its result (the "median of 3").
inline constexpr std::size_t kConfirmationRepeats = 3;

// What the tuner knows when a batch comes back.
struct ConfirmationEvidence {
  const Kernel& kernel;
  const SearchSpace& space;
  CostModel* model;        // may be null; used only when it predicts absolute times
  const History& history;  // measurements before this batch
};

// Which would-be bests are settled by re-measurement.
struct ConfirmationPolicy {
  bool suspicious = true;     // those nothing vouches for (is_suspicious)
  double close_margin = 0.0;  // those less than this fraction faster than the best so far; 0: none
};

// Measures configs[which[j]] once more each, one result per index, in order.
using Remeasure = std::function<std::vector<MeasureResult>(const std::vector<std::size_t>& which)>;

// True when `seconds` (the result of configs[i] in a batch whose ok results are `outcomes`) is
// much faster than the model's prediction or the fastest measured neighbour, or when neither
// exists to vouch for it.
bool is_suspicious(const ConfirmationEvidence& evidence, const std::vector<Config>& configs,
                   const std::vector<MeasureResult>& outcomes, std::size_t i);

// Settles every ok result of the batch that would become the best (beats `best_seconds` and the
// batch's settled results): one the policy names (suspicious, or close to the best so far) is
// replaced by the median of kConfirmationRepeats re-measurements, a failed re-measurement counting
// as slower than any time; when the median is a failure, the config's result is that failure
// ("unstable runtime ..."). Repeats until no unsettled result would be the best. Returns the
// number of extra measurements.
std::size_t confirm_new_bests(const ConfirmationEvidence& evidence, const std::vector<Config>& configs,
                              std::vector<MeasureResult>& outcomes, double best_seconds, const Remeasure& remeasure,
                              const ConfirmationPolicy& policy = {});

}  // namespace perftune
