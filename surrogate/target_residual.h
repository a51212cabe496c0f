#pragma once
// A prior model corrected by the target device's own measurements: the tuner's records of this
// kernel fit a Gaussian process whose mean is linear in the prior's prediction,
//   log seconds(x) = a + b * prior(x) + f(x),    f ~ GP(0, s^2 Matern52(|z(x) - z(x')| / l)),
// where z(x) places each knob's value at its index in the domain, scaled to [0, 1] (knobs with
// one value are left out). a, b are fitted by generalized least squares with a Gaussian prior
// b ~ N(1, kPriorWeightStd^2), clamped at b >= 0: the prior keeps its ranking until the target's
// measurements contradict it, and a prior that ranks the target backwards is switched off rather
// than inverted. The length scale l and the noise share are picked each update by the marginal
// likelihood over a small grid (s^2 in closed form). This is the "prior mean + GP" of transfer
// Bayesian optimization. Search ranks by the posterior mean minus `exploration` posterior standard
// deviations (a lower confidence bound on log seconds: GP-LCB), so once the prior's favourites are
// measured, configs the target's data say little about get their turn.
//
// Why: a model pre-trained on other devices ranks the target's configs by what was fast there.
// Fine-tuning its weights on the first tens of target measurements overwrites that knowledge
// (gpu_transfer, experiments/RESULTS.md); a residual keeps it where the target has no data and
// corrects it near what was measured, so later rounds search around the target's best configs.
// Failed measurements count as slow as the slowest one measured (a failing region is avoided).
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "surrogate/cost_model.h"

namespace perftune {

struct TargetResidualOptions {
  // Pass update() on to the prior as well (a learned prior then fine-tunes its weights as
  // without the residual). Off: the prior stays as trained and only the residual learns.
  bool fine_tune_prior = false;
  // Points kept per kernel, the most recent ones (each update costs O(n^3) per grid point); 512
  // is 2.5x the largest budget of the bundled experiments.
  std::size_t max_points = 512;
  // kappa of the lower confidence bound mean - kappa * sd on log seconds; 0: the mean alone.
  double exploration = 0.0;
};

// What the last fit of a kernel found (for tests and reports).
struct ResidualFit {
  std::size_t points = 0;          // measurements the fit used (failed ones included)
  double offset = 0.0;             // a
  double prior_weight = 1.0;       // b
  double length_scale = 0.0;       // l, in units of the [0, 1] knob-index cube
  double noise_share = 0.0;        // noise variance / signal variance
  double signal_variance = 0.0;    // s^2, in log seconds squared
};

class TargetResidualModel : public CostModel {
 public:
  explicit TargetResidualModel(std::unique_ptr<CostModel> prior, TargetResidualOptions options = {});

  std::string name() const override { return prior_->name() + "+residual"; }
  // The prior's prediction, corrected by the kernel's fit once it has two successful measurements
  // (minus options.exploration posterior standard deviations). Thread-safe.
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override;
  // Adds the measurements of `kernel` and refits its residual (one prior predict() call for the new
  // configs, or for all of them when fine_tune_prior changes the prior).
  void update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) override;
  bool predicts_absolute_time() const override { return true; }

  // The kernel's last fit; nullopt before it has two successful measurements.
  std::optional<ResidualFit> fit(const Kernel& kernel) const;

 private:
  struct KernelData {
    std::vector<Config> configs;
    std::vector<std::optional<double>> log_seconds;  // nullopt: failed
    std::vector<double> prior;                       // the prior's prediction at each config
    std::vector<std::vector<double>> coords;         // z(config)
    std::optional<ResidualFit> fit;
    std::vector<double> weights;                     // C^-1 (y - a - b prior), for the posterior mean
    std::vector<double> factor;                      // Cholesky factor of C, for the posterior variance
  };
  void refit(KernelData& data);

  std::unique_ptr<CostModel> prior_;
  TargetResidualOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, KernelData> kernels_;  // by kernel key
};

// z(config): each knob with more than one value at its domain index / (size - 1); for tests.
std::vector<double> knob_index_coords(const SearchSpace& space, const Config& config);

}  // namespace perftune
