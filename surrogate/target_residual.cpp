#include "surrogate/target_residual.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace perftune {

namespace {

// The prior's weight b is believed within about +-2 * 0.5 of 1 (ours: the prior keeps a say until
// the target's data outweigh it; at 0 it is switched off, at 2 it counts double).
constexpr double kPriorWeightStd = 0.5;
// Length scales in units of the [0, 1] knob-index cube: at 0.25 configs one binary knob apart
// share nothing, at 2 they share most; and the noise variance as a share of the signal's (a
// measured rank of runtimes is nearly noise-free, a poorly fitting prior leaves structure the GP
// cannot use). Picked per fit by the marginal likelihood, so a grid suffices (ours).
constexpr double kLengthScales[] = {0.25, 0.5, 1.0, 2.0};
constexpr double kNoiseShares[] = {0.01, 0.1, 0.5};
constexpr double kJitter = 1e-9;  // on the diagonal, so that duplicate coordinates factor

// Matern 5/2 correlation (Rasmussen & Williams, eq. 4.17), the usual kernel of Bayesian optimization.
double matern52(double r) {
  const double s = std::sqrt(5.0) * r;
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

double distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(sum);
}

// In-place lower Cholesky factor of the n x n row-major `m`; false if it is not positive definite.
bool cholesky(std::vector<double>& m, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = m[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= m[j * n + k] * m[j * n + k];
    if (!(d > 0)) return false;
    d = std::sqrt(d);
    m[j * n + j] = d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = m[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= m[i * n + k] * m[j * n + k];
      m[i * n + j] = s / d;
    }
  }
  return true;
}

// x = (L L^T)^-1 b for the factor of cholesky().
std::vector<double> solve(const std::vector<double>& l, std::size_t n, std::vector<double> x) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) x[i] -= l[i * n + k] * x[k];
    x[i] /= l[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) x[i] -= l[k * n + i] * x[k];
    x[i] /= l[i * n + i];
  }
  return x;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

std::vector<double> knob_index_coords(const SearchSpace& space, const Config& config) {
  std::vector<double> z;
  for (std::size_t k = 0; k < space.dimension(); ++k) {
    const std::size_t size = space.knobs()[k].values.size();
    if (size < 2) continue;
    const int index = space.index_of(k, config.values.at(k));
    z.push_back(index < 0 ? 0.0 : static_cast<double>(index) / static_cast<double>(size - 1));
  }
  return z;
}

TargetResidualModel::TargetResidualModel(std::unique_ptr<CostModel> prior, TargetResidualOptions options)
    : prior_(std::move(prior)), options_(options) {
  if (!prior_) throw std::invalid_argument("a target residual needs a prior model");
  if (options_.max_points < 2) throw std::invalid_argument("a target residual needs to keep at least 2 points");
  if (!(options_.exploration >= 0)) throw std::invalid_argument("a target residual's exploration must be >= 0");
}

void TargetResidualModel::predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                                  std::span<float> log_seconds) {
  prior_->predict(kernel, space, configs, log_seconds);
  std::lock_guard lock(mutex_);
  const auto it = kernels_.find(kernel.key());
  if (it == kernels_.end() || !it->second.fit) return;
  const KernelData& data = it->second;
  const ResidualFit& fit = *data.fit;
  const std::size_t n = data.coords.size();
  std::vector<double> k(n);
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const std::vector<double> z = knob_index_coords(space, configs[c]);
    double correction = 0.0;
    for (std::size_t j = 0; j < n; ++j) {
      k[j] = matern52(distance(z, data.coords[j]) / fit.length_scale);
      correction += k[j] * data.weights[j];
    }
    double bound = 0.0;
    if (options_.exploration > 0) {
      // Posterior variance of f: s^2 (1 - k^T C^-1 k), with v = L^-1 k by forward substitution.
      double explained = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        double v = k[i];
        for (std::size_t j = 0; j < i; ++j) v -= data.factor[i * n + j] * k[j];
        k[i] = v / data.factor[i * n + i];  // k[0..i] now holds v[0..i]; k[i+1..] is still k
        explained += k[i] * k[i];
      }
      bound = options_.exploration * std::sqrt(fit.signal_variance * std::max(0.0, 1.0 - explained));
    }
    log_seconds[c] = static_cast<float>(fit.offset + fit.prior_weight * log_seconds[c] + correction - bound);
  }
}

void TargetResidualModel::update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {
  if (options_.fine_tune_prior) prior_->update(kernel, space, measurements);
  if (measurements.empty()) return;
  std::vector<Config> fresh;
  for (const Measurement& m : measurements) fresh.push_back(m.config);
  std::vector<float> prior(fresh.size());
  prior_->predict(kernel, space, fresh, prior);

  std::lock_guard lock(mutex_);
  KernelData& data = kernels_[kernel.key()];
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const MeasureResult& result = measurements[i].result;
    data.configs.push_back(fresh[i]);
    data.log_seconds.push_back(result.ok() && result.seconds > 0 ? std::optional<double>(std::log(result.seconds))
                                                                  : std::nullopt);
    data.prior.push_back(prior[i]);
    data.coords.push_back(knob_index_coords(space, fresh[i]));
  }
  if (data.configs.size() > options_.max_points) {
    const auto drop = static_cast<std::ptrdiff_t>(data.configs.size() - options_.max_points);
    data.configs.erase(data.configs.begin(), data.configs.begin() + drop);
    data.log_seconds.erase(data.log_seconds.begin(), data.log_seconds.begin() + drop);
    data.prior.erase(data.prior.begin(), data.prior.begin() + drop);
    data.coords.erase(data.coords.begin(), data.coords.begin() + drop);
  }
  if (options_.fine_tune_prior) {  // the prior moved: its predictions at every kept point too
    std::vector<float> all(data.configs.size());
    prior_->predict(kernel, space, data.configs, all);
    data.prior.assign(all.begin(), all.end());
  }
  refit(data);
}

void TargetResidualModel::refit(KernelData& data) {
  double slowest = -std::numeric_limits<double>::infinity();
  std::size_t ok = 0;
  for (const auto& y : data.log_seconds)
    if (y) {
      slowest = std::max(slowest, *y);
      ++ok;
    }
  if (ok < 2) {
    data.fit.reset();
    return;
  }
  const std::size_t n = data.configs.size();
  std::vector<double> y(n), ones(n, 1.0);
  for (std::size_t i = 0; i < n; ++i) y[i] = data.log_seconds[i].value_or(slowest);
  const std::vector<double>& p = data.prior;
  std::vector<double> dist(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i; ++j) dist[i * n + j] = dist[j * n + i] = distance(data.coords[i], data.coords[j]);

  double mean_residual = 0.0;
  for (std::size_t i = 0; i < n; ++i) mean_residual += (y[i] - p[i]) / static_cast<double>(n);
  const double prior_precision = 1.0 / (kPriorWeightStd * kPriorWeightStd);

  data.fit.reset();
  data.weights.clear();
  data.factor.clear();
  double best_likelihood = -std::numeric_limits<double>::infinity();
  for (const double length : kLengthScales)
    for (const double noise : kNoiseShares) {
      std::vector<double> c(n * n);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j <= i; ++j)
          c[i * n + j] = c[j * n + i] = i == j ? 1.0 + noise + kJitter : matern52(dist[i * n + j] / length);
      if (!cholesky(c, n)) continue;
      const std::vector<double> u1 = solve(c, n, ones), up = solve(c, n, p), uy = solve(c, n, y);
      // The signal variance at the prior's own weight (a = mean residual, b = 1) scales b's prior
      // against the data; then a, b by generalized least squares under that prior.
      const double a0 = mean_residual;
      double s2 = 0.0;
      for (std::size_t i = 0; i < n; ++i) s2 += (y[i] - a0 - p[i]) * (uy[i] - a0 * u1[i] - up[i]);
      s2 = std::max(s2 / static_cast<double>(n), 1e-12);
      const double m11 = dot(ones, u1) / s2, m12 = dot(ones, up) / s2, m22 = dot(p, up) / s2 + prior_precision;
      const double r1 = dot(ones, uy) / s2, r2 = dot(p, uy) / s2 + prior_precision * 1.0;
      const double det = m11 * m22 - m12 * m12;
      double a = 0.0, b = 0.0;
      if (det > 0) {
        a = (m22 * r1 - m12 * r2) / det;
        b = (m11 * r2 - m12 * r1) / det;
      }
      if (!(det > 0) || b < 0) {  // a prior that ranks the target backwards is switched off, not inverted
        b = 0.0;
        a = r1 / m11;
      }
      std::vector<double> w(n);
      double fit_s2 = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        w[i] = uy[i] - a * u1[i] - b * up[i];
        fit_s2 += (y[i] - a - b * p[i]) * w[i];
      }
      fit_s2 = std::max(fit_s2 / static_cast<double>(n), 1e-12);
      double log_det = 0.0;
      for (std::size_t i = 0; i < n; ++i) log_det += std::log(c[i * n + i]);
      // Profile log likelihood (s^2 at its maximum) plus the log prior of b, constants dropped.
      const double likelihood = -0.5 * static_cast<double>(n) * std::log(fit_s2) - log_det -
                                0.5 * prior_precision * (b - 1.0) * (b - 1.0);
      if (likelihood > best_likelihood) {
        best_likelihood = likelihood;
        data.fit = ResidualFit{n, a, b, length, noise, fit_s2};
        data.weights = std::move(w);
        data.factor = std::move(c);
      }
    }
}

std::optional<ResidualFit> TargetResidualModel::fit(const Kernel& kernel) const {
  std::lock_guard lock(mutex_);
  const auto it = kernels_.find(kernel.key());
  return it == kernels_.end() ? std::nullopt : it->second.fit;
}

}  // namespace perftune
