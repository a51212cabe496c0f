#pragma once
// Prior models corrected by the target device's own measurements: the tuner's records of this
// kernel fit a Gaussian process whose mean is linear in the priors' predictions,
//   log seconds(x) = a + sum_i b_i * prior_i(x) + f(x),    f ~ GP(0, s^2 Matern52(|z(x) - z(x')| / l)),
// where z(x) places each knob's value at its index in the domain, scaled to [0, 1] (knobs with
// one value are left out). a, b are fitted by generalized least squares with a Gaussian prior
// b_i ~ N(1/n, kPriorWeightStd^2 / n) for n priors (equal shares: before any target data the
// prediction is the priors' mean; the shares' sum keeps the one-prior belief N(1, kPriorWeightStd^2)),
// clamped at b_i >= 0: a prior keeps its say until the target's measurements contradict it, and one
// that ranks the target backwards is switched off rather than inverted. With several priors (one
// model per source device) the target's measurements so decide which sources to trust. The length
// scale l and the noise share are picked each update by the marginal likelihood over a small grid
// (s^2 in closed form); with `relevance`, once there are 3 points per knob, each knob's distance is
// also scaled by its own factor (automatic relevance determination, by coordinate ascent on the
// same likelihood): on the target some knobs matter far more than others, and one length scale for
// all blurs the residual along the knobs that matter. This is the "prior mean + GP" of transfer
// Bayesian optimization. Search
// ranks by the posterior mean minus `exploration` posterior standard deviations (a lower
// confidence bound on log seconds: GP-LCB), so once the prior's favourites are measured, configs
// the target's data say little about get their turn.
//
// Why: a model pre-trained on other devices ranks the target's configs by what was fast there.
// Fine-tuning its weights on the first tens of target measurements overwrites that knowledge
// (gpu_transfer, experiments/RESULTS.md); a residual keeps it where the target has no data and
// corrects it near what was measured, so later rounds search around the target's best configs.
// Pooling several source devices into one model trains it on conflicting targets (the same config
// is one input with a different time on each device); one prior per source does not, and its
// weight is learned where it matters, on the target.
// Failed measurements count as slow as the slowest one measured (a failing region is avoided).
//
// Shrinkage (several priors): the first round gives ~10 points for n + 1 weights, and source
// models of one kernel are correlated (they learned much the same ranking), so least squares alone
// would split the weight among them by the noise. The Gaussian prior on the shares is a ridge
// towards the equal split, scaled so that its total is the one-prior belief; the marginal
// likelihood picks l and the noise share with b at its maximum a posteriori, as with one prior.
// A share moves once the target's data consistently favour a source (tests: after a few tens of
// points the agreeing source outweighs a disagreeing one; a backwards one is clamped to 0).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "surrogate/cost_model.h"
#include "surrogate/transfer/target_residual_options.h"

namespace perftune {

// Its posterior (belief()) offers batch policies (search/batch_policy.h) the weights' and the
// residual's joint distribution at any candidates: with several priors that disagree, batch
// Thompson sampling over it spreads a first batch over the sources' favourites (a portfolio: the
// target usually resembles one source), and later batches keep hedging while the shares are
// uncertain; sample_residual draws the residual at the candidates jointly too.

// What the last fit of a kernel found (for tests and reports).
struct ResidualFit {
  std::size_t points = 0;          // measurements the fit used (failed ones included)
  double offset = 0.0;             // a
  double prior_weight = 1.0;       // sum of the b_i (b itself with one prior)
  std::vector<double> prior_weights;  // b_i, one per prior
  double length_scale = 0.0;       // l, in units of the [0, 1] knob-index cube
  double noise_share = 0.0;        // noise variance / signal variance
  double signal_variance = 0.0;    // s^2, in log seconds squared
  // Per knob coordinate, the factor its distance is scaled by (TargetResidualOptions::relevance;
  // all 1: isotropic). Distances are |relevance * (z(x) - z(x'))| / length_scale.
  std::vector<double> relevance;
  // Per knob coordinate, true where its distance is categorical (TargetResidualOptions::categorical;
  // empty: all ordered): any two different values are |relevance| apart, the ends of an ordered knob.
  std::vector<bool> categorical;
};

class TargetResidualModel : public CostModel {
 public:
  explicit TargetResidualModel(std::unique_ptr<CostModel> prior, TargetResidualOptions options = {});
  // Several priors (at least one), each a column of the mean; throws std::invalid_argument for none or a null one.
  explicit TargetResidualModel(std::vector<std::unique_ptr<CostModel>> priors, TargetResidualOptions options = {});

  std::string name() const override;
  // The priors' mean prediction (one prior: its prediction), corrected by the kernel's fit once it has two successful measurements
  // (minus options.exploration posterior standard deviations). Thread-safe.
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override;
  // Adds the measurements of `kernel` and refits its residual (one predict() call per prior for the
  // new configs, or for all of them when fine_tune_prior changes the priors).
  void update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) override;
  bool predicts_absolute_time() const override { return true; }
  // The kernel's posterior for a batch policy: its measurements, the frozen priors' favourites,
  // and the scores at candidates, at the fitted weights or drawn. Used while the model lives.
  std::unique_ptr<PredictiveBelief> belief(const Kernel& kernel, const SearchSpace& space) override;

  // The kernel's last fit; nullopt before it has two successful measurements.
  std::optional<ResidualFit> fit(const Kernel& kernel) const;

 private:
  class Belief;
  struct KernelData {
    std::vector<Config> configs;
    std::vector<std::optional<double>> log_seconds;  // nullopt: failed
    std::vector<std::vector<double>> prior;          // prior[i][j]: prior i's prediction at config j
    std::vector<std::vector<double>> coords;         // z(config)
    std::optional<ResidualFit> fit;
    std::vector<double> weights;                     // C^-1 (y - a - b prior), for the posterior mean
    std::vector<double> factor;                      // Cholesky factor of C, for the posterior variance
    // For draws of the mean's weights x = (a, b): C^-1 1, C^-1 y, C^-1 prior_i, and x's posterior
    // precision (the normal equations' matrix, (n + 1)^2 row-major) at the chosen length scale and noise.
    std::vector<double> solved_ones, solved_y;
    std::vector<std::vector<double>> solved_prior;
    std::vector<double> weight_precision;
    // Several frozen priors: each config's predictions, computed once (search revisits configs
    // every round, and n priors cost n model calls per config).
    std::unordered_map<Config, std::vector<float>, ConfigHash> prior_cache;
  };
  void refit(KernelData& data);
  // Each prior's predictions at `configs`, one column per prior. With several priors that stay as
  // trained, memoized per kernel; one prior is asked every time, as before several were allowed, so
  // its results reproduce exactly (a model's prediction may differ in the last bit between batches).
  std::vector<std::vector<float>> predict_priors(const Kernel& kernel, const SearchSpace& space,
                                                 std::span<const Config> configs);

  std::vector<std::unique_ptr<CostModel>> priors_;
  TargetResidualOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, KernelData> kernels_;  // by kernel key
};


}  // namespace perftune
