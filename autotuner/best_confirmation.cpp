#include "autotuner/best_confirmation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace perftune {

namespace {

bool one_knob_apart(const Config& a, const Config& b) {
  if (a.values.size() != b.values.size()) return false;
  std::size_t differ = 0;
  for (std::size_t k = 0; k < a.values.size() && differ < 2; ++k) differ += a.values[k] != b.values[k];
  return differ == 1;
}

double time_or_infinity(const MeasureResult& result) {
  return result.ok() ? result.seconds : std::numeric_limits<double>::infinity();
}

std::string describe(const MeasureResult& result) {
  return result.ok() ? seconds_text(result.seconds) : std::string(status_name(result.status));
}

// The median of the re-measurements, failures ranked slowest; its failure when it is one.
// `why_set_aside` says why the first figure was not counted.
MeasureResult median_of(std::vector<MeasureResult> again, const MeasureResult& first, const std::string& why_set_aside) {
  std::vector<std::size_t> order(again.size());
  for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return time_or_infinity(again[a]) < time_or_infinity(again[b]); });
  std::string all;
  for (const MeasureResult& result : again) all += (all.empty() ? "" : ", ") + describe(result);
  MeasureResult median = std::move(again[order[order.size() / 2]]);
  const std::string why = "first measurement " + describe(first) + " set aside " + why_set_aside + "; median of " +
                          std::to_string(order.size()) + " re-measurements (" + all + ")";
  if (median.ok()) {
    median.message = median.message.empty() ? why : why + ": " + median.message;
    return median;
  }
  return MeasureResult::failure(MeasureStatus::kRuntimeError, "unstable runtime: " + why +
                                (median.message.empty() ? "" : "; " + median.message));
}

}  // namespace

bool is_suspicious(const ConfirmationEvidence& evidence, const std::vector<Config>& configs,
                   const std::vector<MeasureResult>& outcomes, std::size_t i) {
  const double seconds = outcomes[i].seconds;
  bool vouched = false;
  if (evidence.model && evidence.model->predicts_absolute_time()) {
    float log_seconds = NAN;
    evidence.model->predict(evidence.kernel, evidence.space, std::span<const Config>(&configs[i], 1),
                            std::span<float>(&log_seconds, 1));
    if (std::isfinite(log_seconds)) {
      if (seconds * kModelSuspicionFactor < std::exp(static_cast<double>(log_seconds))) return true;
      vouched = true;
    }
  }
  double fastest_neighbour = std::numeric_limits<double>::infinity();
  for (const Measurement& m : evidence.history.entries())
    if (m.result.ok() && one_knob_apart(m.config, configs[i])) fastest_neighbour = std::min(fastest_neighbour, m.result.seconds);
  for (std::size_t j = 0; j < configs.size(); ++j)
    if (j != i && outcomes[j].ok() && one_knob_apart(configs[j], configs[i]))
      fastest_neighbour = std::min(fastest_neighbour, outcomes[j].seconds);
  if (std::isfinite(fastest_neighbour)) {
    if (seconds * kNeighbourSuspicionFactor < fastest_neighbour) return true;
    vouched = true;
  }
  return !vouched;
}

std::size_t confirm_new_bests(const ConfirmationEvidence& evidence, const std::vector<Config>& configs,
                              std::vector<MeasureResult>& outcomes, double best_seconds, const Remeasure& remeasure,
                              const ConfirmationPolicy& policy) {
  std::size_t extra = 0;
  std::vector<bool> settled(configs.size(), false);
  for (;;) {
    // Would-be bests in batch order: each beats the settled best and every earlier one.
    double running = best_seconds;
    for (std::size_t i = 0; i < configs.size(); ++i)
      if (settled[i] && outcomes[i].ok()) running = std::min(running, outcomes[i].seconds);
    std::vector<std::size_t> unsure;
    std::vector<std::string> why;
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (settled[i] || !outcomes[i].ok() || !(outcomes[i].seconds < running)) continue;
      const double best_so_far = running;
      running = outcomes[i].seconds;
      settled[i] = true;
      if (policy.suspicious && is_suspicious(evidence, configs, outcomes, i)) {
        unsure.push_back(i);
        why.push_back("as suspicious");
      } else if (policy.close_margin > 0 && std::isfinite(best_so_far) &&
                 outcomes[i].seconds >= best_so_far * (1 - policy.close_margin)) {
        unsure.push_back(i);
        why.push_back("as within " + std::to_string(std::lround(policy.close_margin * 100)) + "% of the best so far (" +
                      seconds_text(best_so_far) + ")");
      }
    }
    if (unsure.empty()) return extra;
    std::vector<std::vector<MeasureResult>> again(unsure.size());
    for (std::size_t repeat = 0; repeat < kConfirmationRepeats; ++repeat) {
      std::vector<MeasureResult> measured = remeasure(unsure);
      extra += unsure.size();
      for (std::size_t j = 0; j < unsure.size(); ++j) again[j].push_back(std::move(measured[j]));
    }
    for (std::size_t j = 0; j < unsure.size(); ++j)
      outcomes[unsure[j]] = median_of(std::move(again[j]), outcomes[unsure[j]], why[j]);
  }
}

}  // namespace perftune
