#include "surrogate/transfer/target_residual.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "ir/random.h"
#include "surrogate/transfer/cholesky.h"

namespace perftune {

namespace {

// The prior's weight b is believed within about +-2 * 0.5 of 1 (ours: the prior keeps a say until
// the target's data outweigh it; at 0 it is switched off, at 2 it counts double). With n priors each
// share b_i ~ N(1/n, 0.5^2 / n): their sum keeps that belief, and a share can leave its 1/n only
// as far as the data pull it, so ten points fitting n + 1 weights do not hand the prediction to
// whichever source happens to fit them best (section "Shrinkage" of the header).
constexpr double kPriorWeightStd = 0.5;
// The clamped fit enumerates the 2^n faces of b >= 0 (exact, and cheap for a handful of sources:
// the bundled kernels have at most 3 other devices).
constexpr std::size_t kMaxPriors = 8;
// Length scales in units of the [0, 1] knob-index cube: at 0.25 configs one binary knob apart
// share nothing, at 2 they share most; and the noise variance as a share of the signal's (a
// measured rank of runtimes is nearly noise-free, a poorly fitting prior leaves structure the GP
// cannot use). Picked per fit by the marginal likelihood, so a grid suffices (ours).
constexpr double kLengthScales[] = {0.25, 0.5, 1.0, 2.0};
constexpr double kNoiseShares[] = {0.01, 0.1, 0.5};
constexpr double kJitter = 1e-9;  // on the diagonal, so that duplicate coordinates factor
// Points per knob before relevances are fitted (fewer would let them fit the noise).
constexpr std::size_t kRelevanceMinPointsPerKnob = 3;

// Matern 5/2 correlation (Rasmussen & Williams, eq. 4.17), the usual kernel of Bayesian optimization.
double matern52(double r) {
  const double s = std::sqrt(5.0) * r;
  return (1.0 + s + s * s / 3.0) * std::exp(-s);
}

// Euclidean, each coordinate weighted by its relevance (ResidualFit::relevance; empty: all 1); a
// categorical coordinate (ResidualFit::categorical; empty: none) counts any two different values one
// unit apart, as far as the ends of an ordered knob.
double distance(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& relevance,
                const std::vector<bool>& categorical) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double apart = !categorical.empty() && categorical[i] ? (a[i] != b[i] ? 1.0 : 0.0) : a[i] - b[i];
    const double step = apart * (relevance.empty() ? 1.0 : relevance[i]);
    sum += step * step;
  }
  return std::sqrt(sum);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// The normal equations of the mean's weights x = (a, b_1..b_n): minimize 0.5 x^T M x - r^T x
// subject to b_i >= 0 (M is positive definite: the b_i carry a Gaussian prior). The minimum lies on
// one face of the orthant {b_i = 0 for i outside F}, where it is that face's unconstrained minimum;
// the feasible face minimum of least objective is therefore the constrained one. With one prior this
// is a 2 x 2 solve by Cramer's rule, falling back to b = 0, as before several priors were allowed.
// Returns nullopt when no face has a positive definite system.
std::optional<std::vector<double>> clamped_weights(const std::vector<double>& m, const std::vector<double>& r,
                                                   std::size_t n) {
  const std::size_t d = n + 1;
  // The unconstrained minimum of the face `free` (bit i: b_i free), nullopt if singular or infeasible.
  auto face = [&](std::size_t free) -> std::optional<std::vector<double>> {
    std::vector<std::size_t> index = {0};
    for (std::size_t i = 0; i < n; ++i)
      if (free >> i & 1) index.push_back(i + 1);
    std::vector<double> x(d, 0.0);
    const std::size_t k = index.size();
    if (k == 1) {
      x[0] = r[0] / m[0];
    } else if (k == 2) {
      const std::size_t j = index[1];
      const double m11 = m[0], m12 = m[j], m22 = m[j * d + j];
      const double det = m11 * m22 - m12 * m12;
      if (!(det > 0)) return std::nullopt;
      x[0] = (m22 * r[0] - m12 * r[j]) / det;
      x[j] = (m11 * r[j] - m12 * r[0]) / det;
    } else {
      std::vector<double> sub(k * k), rhs(k);
      for (std::size_t i = 0; i < k; ++i) {
        rhs[i] = r[index[i]];
        for (std::size_t j = 0; j < k; ++j) sub[i * k + j] = m[index[i] * d + index[j]];
      }
      if (!cholesky_factor(sub, k)) return std::nullopt;
      const std::vector<double> solved = cholesky_solve(sub, k, rhs);
      for (std::size_t i = 0; i < k; ++i) x[index[i]] = solved[i];
    }
    for (std::size_t i = 1; i < d; ++i)
      if (x[i] < 0) return std::nullopt;
    return x;
  };
  const std::size_t all = (std::size_t{1} << n) - 1;
  if (auto x = face(all)) return x;  // the unconstrained minimum is feasible: it is the answer
  std::optional<std::vector<double>> best;
  double best_objective = std::numeric_limits<double>::infinity();
  for (std::size_t free = all; free-- > 0;) {
    auto x = face(free);
    if (!x) continue;
    double objective = 0.0;
    for (std::size_t i = 0; i < d; ++i) {
      double row = 0.0;
      for (std::size_t j = 0; j < d; ++j) row += m[i * d + j] * (*x)[j];
      objective += 0.5 * (*x)[i] * row - r[i] * (*x)[i];
    }
    if (objective < best_objective) {
      best_objective = objective;
      best = std::move(x);
    }
  }
  return best;
}

}  // namespace

namespace {

std::vector<std::unique_ptr<CostModel>> one(std::unique_ptr<CostModel> prior) {
  std::vector<std::unique_ptr<CostModel>> priors;
  priors.push_back(std::move(prior));
  return priors;
}

}  // namespace

TargetResidualModel::TargetResidualModel(std::unique_ptr<CostModel> prior, TargetResidualOptions options)
    : TargetResidualModel(one(std::move(prior)), options) {}

TargetResidualModel::TargetResidualModel(std::vector<std::unique_ptr<CostModel>> priors, TargetResidualOptions options)
    : priors_(std::move(priors)), options_(options) {
  if (priors_.empty()) throw std::invalid_argument("a target residual needs a prior model");
  if (priors_.size() > kMaxPriors)
    throw std::invalid_argument("a target residual takes at most " + std::to_string(kMaxPriors) + " priors, not " +
                                std::to_string(priors_.size()));
  for (const auto& prior : priors_)
    if (!prior) throw std::invalid_argument("a target residual needs a prior model");
  if (options_.max_points < 2) throw std::invalid_argument("a target residual needs to keep at least 2 points");
  if (!(options_.exploration >= 0)) throw std::invalid_argument("a target residual's exploration must be >= 0");
}

std::string TargetResidualModel::name() const {
  if (priors_.size() == 1) return priors_[0]->name() + "+residual";
  std::string names;
  for (const auto& prior : priors_) {
    if (!names.empty()) names += ",";
    names += prior->name();
  }
  return "{" + names + "}+residual";
}

std::vector<std::vector<float>> TargetResidualModel::predict_priors(const Kernel& kernel, const SearchSpace& space,
                                                                    std::span<const Config> configs) {
  std::vector<std::vector<float>> columns(priors_.size(), std::vector<float>(configs.size()));
  if (priors_.size() == 1 || options_.fine_tune_prior) {
    for (std::size_t i = 0; i < priors_.size(); ++i) priors_[i]->predict(kernel, space, configs, columns[i]);
    return columns;
  }
  std::vector<std::size_t> missing;
  {
    std::lock_guard lock(mutex_);
    const auto& cache = kernels_[kernel.key()].prior_cache;
    for (std::size_t c = 0; c < configs.size(); ++c) {
      const auto it = cache.find(configs[c]);
      if (it == cache.end()) {
        missing.push_back(c);
        continue;
      }
      for (std::size_t i = 0; i < priors_.size(); ++i) columns[i][c] = it->second[i];
    }
  }
  if (missing.empty()) return columns;
  std::vector<Config> asked;
  for (const std::size_t c : missing) asked.push_back(configs[c]);
  std::vector<float> answers(asked.size());
  for (std::size_t i = 0; i < priors_.size(); ++i) {
    priors_[i]->predict(kernel, space, asked, answers);
    for (std::size_t j = 0; j < missing.size(); ++j) columns[i][missing[j]] = answers[j];
  }
  std::lock_guard lock(mutex_);
  auto& cache = kernels_[kernel.key()].prior_cache;
  for (const std::size_t c : missing) {
    std::vector<float> row(priors_.size());
    for (std::size_t i = 0; i < priors_.size(); ++i) row[i] = columns[i][c];
    cache.emplace(configs[c], std::move(row));
  }
  return columns;
}

void TargetResidualModel::predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
                                  std::span<float> log_seconds) {
  const std::vector<std::vector<float>> columns = predict_priors(kernel, space, configs);
  const std::size_t n_priors = priors_.size();
  std::lock_guard lock(mutex_);
  const auto it = kernels_.find(kernel.key());
  if (it == kernels_.end() || !it->second.fit) {
    // No fit yet: every prior at its share's prior mean 1/n (one prior: its prediction unchanged).
    for (std::size_t c = 0; c < configs.size(); ++c) {
      if (n_priors == 1) {
        log_seconds[c] = columns[0][c];
        continue;
      }
      double mean = 0.0;
      for (const auto& column : columns) mean += column[c];
      log_seconds[c] = static_cast<float>(mean / static_cast<double>(n_priors));
    }
    return;
  }
  const KernelData& data = it->second;
  const ResidualFit& fit = *data.fit;
  const std::size_t n = data.coords.size();
  // Configs in chunks whose kernel vectors k are the columns of one matrix, so that the posterior
  // variance's L^-1 k is one blocked triangular solve per chunk instead of one per config (a
  // search scores about 18k configs a round).
  constexpr std::size_t kChunk = 256;
  std::vector<double> k(n * std::min(kChunk, configs.size()));
  std::vector<double> correction(kChunk);
  for (std::size_t first = 0; first < configs.size(); first += kChunk) {
    const std::size_t m = std::min(kChunk, configs.size() - first);
    for (std::size_t c = 0; c < m; ++c) {
      const std::vector<double> z = space.index_coords(configs[first + c]);
      double* column = &k[c * n];
      correction[c] = 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        column[j] = matern52(distance(z, data.coords[j], fit.relevance, fit.categorical) / fit.length_scale);
        correction[c] += column[j] * data.weights[j];
      }
    }
    // Posterior variance of f: s^2 (1 - k^T C^-1 k) = s^2 (1 - v . v) with v = L^-1 k.
    if (options_.exploration > 0) forward_substitute_columns(data.factor, n, k.data(), m);
    for (std::size_t c = 0; c < m; ++c) {
      double bound = 0.0;
      if (options_.exploration > 0) {
        double explained = 0.0;
        for (std::size_t j = 0; j < n; ++j) explained += k[c * n + j] * k[c * n + j];
        bound = options_.exploration * std::sqrt(fit.signal_variance * std::max(0.0, 1.0 - explained));
      }
      double weighted = 0.0;
      for (std::size_t i = 0; i < n_priors; ++i) weighted += fit.prior_weights[i] * columns[i][first + c];
      log_seconds[first + c] = static_cast<float>(fit.offset + weighted + correction[c] - bound);
    }
  }
}

void TargetResidualModel::update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) {
  if (options_.fine_tune_prior)
    for (const auto& prior : priors_) prior->update(kernel, space, measurements);
  if (measurements.empty()) return;
  std::vector<Config> fresh;
  for (const Measurement& m : measurements) fresh.push_back(m.config);
  const std::vector<std::vector<float>> columns = predict_priors(kernel, space, fresh);

  std::lock_guard lock(mutex_);
  KernelData& data = kernels_[kernel.key()];
  data.prior.resize(priors_.size());
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const MeasureResult& result = measurements[i].result;
    data.configs.push_back(fresh[i]);
    data.log_seconds.push_back(result.ok() && result.seconds > 0 ? std::optional<double>(std::log(result.seconds))
                                                                  : std::nullopt);
    for (std::size_t p = 0; p < columns.size(); ++p) data.prior[p].push_back(columns[p][i]);
    data.coords.push_back(space.index_coords(fresh[i]));
  }
  if (data.configs.size() > options_.max_points) {
    const auto drop = static_cast<std::ptrdiff_t>(data.configs.size() - options_.max_points);
    data.configs.erase(data.configs.begin(), data.configs.begin() + drop);
    data.log_seconds.erase(data.log_seconds.begin(), data.log_seconds.begin() + drop);
    for (auto& column : data.prior) column.erase(column.begin(), column.begin() + drop);
    data.coords.erase(data.coords.begin(), data.coords.begin() + drop);
  }
  if (options_.fine_tune_prior) {  // the priors moved: their predictions at every kept point too
    const std::vector<std::vector<float>> all = predict_priors(kernel, space, data.configs);
    for (std::size_t p = 0; p < all.size(); ++p) data.prior[p].assign(all[p].begin(), all[p].end());
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
  const std::size_t n_priors = data.prior.size();
  std::vector<double> y(n), ones(n, 1.0);
  for (std::size_t i = 0; i < n; ++i) y[i] = data.log_seconds[i].value_or(slowest);
  const std::vector<std::vector<double>>& p = data.prior;
  auto distances = [&](const std::vector<double>& relevance, const std::vector<bool>& categorical) {
    std::vector<double> dist(n * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j)
        dist[i * n + j] = dist[j * n + i] = distance(data.coords[i], data.coords[j], relevance, categorical);
    return dist;
  };

  // Each share's prior mean and precision (kPriorWeightStd), and the priors' mean at those shares.
  const double share = 1.0 / static_cast<double>(n_priors);
  const double prior_precision = static_cast<double>(n_priors) / (kPriorWeightStd * kPriorWeightStd);
  std::vector<double> p_mean(n, 0.0);
  for (const auto& column : p)
    for (std::size_t i = 0; i < n; ++i) p_mean[i] += share * column[i];
  double mean_residual = 0.0;
  for (std::size_t i = 0; i < n; ++i) mean_residual += (y[i] - p_mean[i]) / static_cast<double>(n);

  data.fit.reset();
  data.weights.clear();
  data.factor.clear();
  const std::size_t d = n_priors + 1;
  double best_likelihood = -std::numeric_limits<double>::infinity();
  // Fits at one (relevance, categorical, length, noise) and keeps it if its likelihood is the best so far.
  auto try_fit = [&](const std::vector<double>& dist, const std::vector<double>& relevance,
                     const std::vector<bool>& categorical, double length, double noise) {
    std::vector<double> c(n * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j <= i; ++j)
        c[i * n + j] = c[j * n + i] = i == j ? 1.0 + noise + kJitter : matern52(dist[i * n + j] / length);
    if (!cholesky_factor(c, n)) return;
    const std::vector<double> u1 = cholesky_solve(c, n, ones), uy = cholesky_solve(c, n, y);
    std::vector<std::vector<double>> up(n_priors);
    for (std::size_t k = 0; k < n_priors; ++k) up[k] = cholesky_solve(c, n, p[k]);
    std::vector<double> up_mean(n, 0.0);
    for (const auto& column : up)
      for (std::size_t i = 0; i < n; ++i) up_mean[i] += share * column[i];
    // The signal variance at the priors' own shares (a = mean residual, b_i = 1/n) scales b's prior
    // against the data; then a, b by generalized least squares under that prior.
    const double a0 = mean_residual;
    double s2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) s2 += (y[i] - a0 - p_mean[i]) * (uy[i] - a0 * u1[i] - up_mean[i]);
    s2 = std::max(s2 / static_cast<double>(n), 1e-12);
    std::vector<double> m(d * d), r(d);
    m[0] = dot(ones, u1) / s2;
    r[0] = dot(ones, uy) / s2;
    for (std::size_t k = 0; k < n_priors; ++k) {
      m[k + 1] = m[(k + 1) * d] = dot(ones, up[k]) / s2;
      for (std::size_t j = 0; j <= k; ++j)
        m[(k + 1) * d + j + 1] = m[(j + 1) * d + k + 1] = dot(p[k], up[j]) / s2 + (j == k ? prior_precision : 0.0);
      r[k + 1] = dot(p[k], uy) / s2 + prior_precision * share;
    }
    // A prior that ranks the target backwards is switched off, not inverted.
    const std::optional<std::vector<double>> x = clamped_weights(m, r, n_priors);
    if (!x) return;
    const double a = (*x)[0];
    const std::vector<double> b(x->begin() + 1, x->end());
    std::vector<double> w(n);
    double fit_s2 = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      double wi = uy[i] - a * u1[i], ri = y[i] - a;
      for (std::size_t k = 0; k < n_priors; ++k) {
        wi -= b[k] * up[k][i];
        ri -= b[k] * p[k][i];
      }
      w[i] = wi;
      fit_s2 += ri * wi;
    }
    fit_s2 = std::max(fit_s2 / static_cast<double>(n), 1e-12);
    double log_det = 0.0;
    for (std::size_t i = 0; i < n; ++i) log_det += std::log(c[i * n + i]);
    // Profile log likelihood (s^2 at its maximum) plus the log prior of b, constants dropped.
    double log_prior = 0.0;
    for (const double bk : b) log_prior += 0.5 * prior_precision * (bk - share) * (bk - share);
    const double likelihood = -0.5 * static_cast<double>(n) * std::log(fit_s2) - log_det - log_prior;
    if (likelihood > best_likelihood) {
      best_likelihood = likelihood;
      double total = 0.0;
      for (const double bk : b) total += bk;
      data.fit = ResidualFit{n, a, total, b, length, noise, fit_s2, relevance, categorical};
      data.weights = std::move(w);
      data.factor = std::move(c);
      data.solved_ones = u1;
      data.solved_y = uy;
      data.solved_prior = up;
      data.weight_precision = m;
    }
  };
  const std::size_t dims = data.coords.front().size();
  const std::vector<double> isotropic(dims, 1.0);
  const std::vector<bool> ordered(options_.categorical ? dims : 0, false);
  const std::vector<double> dist = distances(isotropic, ordered);
  for (const double length : kLengthScales)
    for (const double noise : kNoiseShares) try_fit(dist, isotropic, ordered, length, noise);
  // Per-knob relevance (automatic relevance determination) by coordinate ascent on the same
  // likelihood, once the data outnumber the knobs enough not to fit noise: a knob that barely
  // matters on the target (or one that matters a lot) then stops blurring the residual. With
  // `categorical`, each knob may also switch between ordered and categorical distances.
  if (options_.relevance && data.fit && n >= kRelevanceMinPointsPerKnob * dims)
    for (int sweep = 0; sweep < 2; ++sweep)
      for (std::size_t k = 0; k < dims; ++k) {
        const std::vector<double> base = data.fit->relevance;
        const std::vector<bool> base_categorical = data.fit->categorical;
        for (const double factor : {0.0, 0.5, 2.0}) {
          std::vector<double> relevance = base;
          relevance[k] *= factor;
          if (relevance[k] == base[k]) continue;  // a knob already switched off
          try_fit(distances(relevance, base_categorical), relevance, base_categorical, data.fit->length_scale, data.fit->noise_share);
        }
        if (options_.categorical && base[k] != 0.0) {
          std::vector<bool> categorical = base_categorical;
          categorical[k] = !categorical[k];
          try_fit(distances(base, categorical), base, categorical, data.fit->length_scale, data.fit->noise_share);
        }
      }
}

namespace {

// A standard normal draw (Box-Muller on our own uniforms: std::normal_distribution differs
// between standard libraries, see ir/random.h).
double standard_normal(Rng& rng) {
  const double u = 1.0 - uniform_unit(rng);  // (0, 1]
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * 3.14159265358979323846 * uniform_unit(rng));
}

// Lower Cholesky factor of the inverse of the d x d positive definite `precision`; nullopt if it
// does not factor.
std::optional<std::vector<double>> covariance_factor(std::vector<double> precision, std::size_t d) {
  if (!cholesky_factor(precision, d)) return std::nullopt;
  std::vector<double> covariance(d * d);
  for (std::size_t j = 0; j < d; ++j) {
    std::vector<double> unit(d, 0.0);
    unit[j] = 1.0;
    const std::vector<double> column = cholesky_solve(precision, d, unit);
    for (std::size_t i = 0; i < d; ++i) covariance[i * d + j] = column[i];
  }
  for (std::size_t i = 0; i < d; ++i)  // symmetric to rounding
    for (std::size_t j = 0; j < i; ++j) covariance[i * d + j] = covariance[j * d + i] = 0.5 * (covariance[i * d + j] + covariance[j * d + i]);
  if (!cholesky_factor(covariance, d)) return std::nullopt;
  return covariance;
}

// The residual's belief at a set of candidates. Each candidate's score under weights x = (a, b) is
//   a (1 - k^T C^-1 1) + sum_i b_i (prior_i - k^T C^-1 prior_i) + k^T C^-1 y - exploration * sd,
// the GP posterior mean given x (at the fitted x: predict()'s mean). Before a fit: b . prior.
class ResidualScores : public CandidateScores {
 public:
  std::size_t n_priors = 0, count = 0;
  std::vector<double> a_term, constant, bonus;
  std::vector<std::vector<double>> b_term;
  std::vector<double> mean_x;
  std::optional<std::vector<double>> spread;    // Cholesky factor of x's posterior covariance; none before a fit
  std::optional<std::vector<double>> f_spread;  // of the residual's posterior covariance at the candidates (sample_residual)

  std::vector<double> expected() const override { return scores(mean_x, nullptr); }

  // x drawn from its posterior (before a fit: the shares' prior; a is a constant then and does not
  // change the choice), clamped at b >= 0, and with sample_residual the residual drawn jointly.
  std::vector<double> draw(Rng& rng) const override {
    std::vector<double> x = mean_x;
    std::vector<double> z(n_priors + 1);
    for (double& value : z) value = standard_normal(rng);
    if (spread) {
      for (std::size_t i = 0; i <= n_priors; ++i)
        for (std::size_t j = 0; j <= i; ++j) x[i] += (*spread)[i * (n_priors + 1) + j] * z[j];
    } else {
      const double sd = kPriorWeightStd / std::sqrt(static_cast<double>(n_priors));
      for (std::size_t i = 1; i <= n_priors; ++i) x[i] += sd * z[i];
    }
    for (std::size_t i = 1; i <= n_priors; ++i) x[i] = std::max(0.0, x[i]);
    if (!f_spread) return scores(x, nullptr);
    std::vector<double> u(count), f_draw(count);
    for (double& value : u) value = standard_normal(rng);
    for (std::size_t c = 0; c < count; ++c) {
      double sum = 0.0;
      for (std::size_t d = 0; d <= c; ++d) sum += (*f_spread)[c * count + d] * u[d];
      f_draw[c] = sum;
    }
    return scores(x, &f_draw);
  }

 private:
  // At weights x, with the residual's draw `f` or, without one, minus the exploration bonus.
  std::vector<double> scores(const std::vector<double>& x, const std::vector<double>* f) const {
    std::vector<double> out(count);
    for (std::size_t c = 0; c < count; ++c) {
      double score = x[0] * a_term[c] + constant[c] + (f ? (*f)[c] : -bonus[c]);
      for (std::size_t i = 0; i < n_priors; ++i) score += x[i + 1] * b_term[i][c];
      out[c] = score;
    }
    return out;
  }
};

}  // namespace

class TargetResidualModel::Belief : public PredictiveBelief {
 public:
  Belief(TargetResidualModel& model, const Kernel& kernel, const SearchSpace& space) : model_(model), kernel_(kernel), space_(space) {}

  bool fitted() const override {
    std::lock_guard lock(model_.mutex_);
    const auto it = model_.kernels_.find(kernel_.key());
    return it != model_.kernels_.end() && it->second.fit.has_value();
  }

  std::vector<Measured> measured() const override {
    std::vector<Measured> measured;
    std::lock_guard lock(model_.mutex_);
    if (const auto it = model_.kernels_.find(kernel_.key()); it != model_.kernels_.end())
      for (std::size_t j = 0; j < it->second.configs.size(); ++j) measured.push_back({it->second.configs[j], it->second.log_seconds[j]});
    return measured;
  }

  // From the frozen priors' cache of scored configs (a fine-tuned prior keeps none).
  std::vector<Config> source_favourites(std::size_t count, const std::function<bool(const Config&)>& keep) const override {
    std::vector<Config> favourites;
    const std::size_t n_priors = model_.priors_.size();
    if (count == 0 || n_priors < 2 || model_.options_.fine_tune_prior) return favourites;
    std::lock_guard lock(model_.mutex_);
    const auto it = model_.kernels_.find(kernel_.key());
    if (it == model_.kernels_.end()) return favourites;
    std::vector<std::pair<const Config*, const std::vector<float>*>> scored;
    for (const auto& [config, row] : it->second.prior_cache)
      if (keep(config)) scored.emplace_back(&config, &row);
    for (std::size_t i = 0; i < n_priors; ++i) {
      const std::size_t m = std::min(count, scored.size());
      // By prior i, ties by config: the cache's iteration order must not decide.
      std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(m), scored.end(), [i](const auto& x, const auto& y) {
        return (*x.second)[i] != (*y.second)[i] ? (*x.second)[i] < (*y.second)[i] : x.first->values < y.first->values;
      });
      for (std::size_t j = 0; j < m; ++j) favourites.push_back(*scored[j].first);
    }
    return favourites;
  }

  std::unique_ptr<CandidateScores> at(std::span<const Config> candidates) override {
    const std::size_t n_priors = model_.priors_.size();
    const std::vector<std::vector<float>> columns = model_.predict_priors(kernel_, space_, candidates);
    auto scores = std::make_unique<ResidualScores>();
    ResidualScores& s = *scores;
    const std::size_t count = candidates.size();
    s.n_priors = n_priors;
    s.count = count;
    s.a_term.assign(count, 0.0);
    s.constant.assign(count, 0.0);
    s.bonus.assign(count, 0.0);
    s.b_term.assign(n_priors, std::vector<double>(count));
    for (std::size_t i = 0; i < n_priors; ++i)
      for (std::size_t c = 0; c < count; ++c) s.b_term[i][c] = columns[i][c];
    s.mean_x.assign(n_priors + 1, 0.0);
    std::lock_guard lock(model_.mutex_);
    const auto it = model_.kernels_.find(kernel_.key());
    if (it == model_.kernels_.end() || !it->second.fit) {
      for (std::size_t i = 0; i < n_priors; ++i) s.mean_x[i + 1] = 1.0 / static_cast<double>(n_priors);
      return scores;
    }
    const KernelData& data = it->second;
    const ResidualFit& fit = *data.fit;
    const std::size_t n = data.coords.size();
    s.mean_x[0] = fit.offset;
    for (std::size_t i = 0; i < n_priors; ++i) s.mean_x[i + 1] = fit.prior_weights[i];
    s.spread = covariance_factor(data.weight_precision, n_priors + 1);
    std::vector<std::vector<double>> coords(count), solved(count);  // z(candidate), L^-1 k(candidate)
    std::vector<double> kv(n);
    for (std::size_t c = 0; c < count; ++c) {
      coords[c] = space_.index_coords(candidates[c]);
      for (std::size_t j = 0; j < n; ++j) kv[j] = matern52(distance(coords[c], data.coords[j], fit.relevance, fit.categorical) / fit.length_scale);
      s.a_term[c] = 1.0 - dot(kv, data.solved_ones);
      s.constant[c] = dot(kv, data.solved_y);
      for (std::size_t i = 0; i < n_priors; ++i) s.b_term[i][c] -= dot(kv, data.solved_prior[i]);
      solved[c] = forward_substitute(data.factor, n, kv);  // as in predict()
      const double explained = dot(solved[c], solved[c]);
      s.bonus[c] = model_.options_.exploration * std::sqrt(fit.signal_variance * std::max(0.0, 1.0 - explained));
    }
    if (model_.options_.sample_residual) {
      // s^2 (K(z_c, z_d) - v_c . v_d), factored with a jitter that grows until it factors
      // (candidates next to each other or to a measured config make it nearly singular).
      std::vector<double> covariance(count * count);
      for (std::size_t c = 0; c < count; ++c)
        for (std::size_t d = 0; d <= c; ++d)
          covariance[c * count + d] = covariance[d * count + c] =
              fit.signal_variance * ((c == d ? 1.0 : matern52(distance(coords[c], coords[d], fit.relevance, fit.categorical) / fit.length_scale)) -
                                     dot(solved[c], solved[d]));
      for (const double jitter : {1e-6, 1e-4, 1e-2}) {
        std::vector<double> factor = covariance;
        for (std::size_t c = 0; c < count; ++c) factor[c * count + c] += jitter * fit.signal_variance;
        if (cholesky_factor(factor, count)) {
          s.f_spread = std::move(factor);
          break;
        }
      }
    }
    return scores;
  }

 private:
  TargetResidualModel& model_;
  const Kernel& kernel_;
  const SearchSpace& space_;
};

std::unique_ptr<PredictiveBelief> TargetResidualModel::belief(const Kernel& kernel, const SearchSpace& space) {
  return std::make_unique<Belief>(*this, kernel, space);
}

std::optional<ResidualFit> TargetResidualModel::fit(const Kernel& kernel) const {
  std::lock_guard lock(mutex_);
  const auto it = kernels_.find(kernel.key());
  return it == kernels_.end() ? std::nullopt : it->second.fit;
}

}  // namespace perftune
