#include "surrogate/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "surrogate/gnn_state.h"
#include "surrogate/ranking_metrics.h"

namespace perftune {

namespace {

using Clock = std::chrono::steady_clock;
// Configs (over all training kernels) whose features set the input standardization; the mean and
// std of ~20k rows are stable to a few percent, and featurizing them takes milliseconds.
constexpr std::size_t kStatisticsConfigs = 20000;

struct TrainKernel {
  const MeasuredKernel* measured;
  std::vector<Measurement> measurements;  // successful ones used for training
};

struct ValidationKernel {
  const MeasuredKernel* measured;
  std::vector<Config> configs;
  std::vector<double> seconds;
};

std::vector<std::size_t> ok_indices(const MeasuredKernel& kernel) {
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < kernel.measurements.size(); ++i)
    if (kernel.measurements[i].result.ok() && kernel.measurements[i].result.seconds > 0) ok.push_back(i);
  return ok;
}

void shuffle(std::vector<std::size_t>& items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[uniform_index(rng, i)]);
}

ValidationKernel validation_kernel(const MeasuredKernel& kernel, std::vector<std::size_t> ok, std::size_t limit, Rng& rng) {
  ValidationKernel v{&kernel, {}, {}};
  if (ok.size() > limit) {
    shuffle(ok, rng);
    ok.resize(limit);
  }
  for (std::size_t i : ok) {
    v.configs.push_back(kernel.measurements[i].config);
    v.seconds.push_back(kernel.measurements[i].result.seconds);
  }
  return v;
}

struct ValidationScore {
  double tau = std::numeric_limits<double>::quiet_NaN();
  double top1 = std::numeric_limits<double>::quiet_NaN();  // mean top-1 slowdown
  // What model selection maximizes: tau - top1_weight * top-1 slowdown.
  double selection(double top1_weight) const { return top1_weight > 0 ? tau - top1_weight * top1 : tau; }
};

ValidationScore validation_score(GnnCostModel::State& state, const std::vector<ValidationKernel>& kernels) {
  double tau_sum = 0.0, top1_sum = 0.0;
  std::size_t counted = 0;
  for (const ValidationKernel& v : kernels) {
    if (v.configs.size() < 2) continue;
    const auto pred = state.forward(v.measured->kernel, *v.measured->space, v.configs, /*training=*/false).contiguous();
    const std::vector<double> predicted(pred.data_ptr<float>(), pred.data_ptr<float>() + pred.numel());
    tau_sum += kendall_tau(predicted, v.seconds);
    top1_sum += top_k_slowdown(predicted, v.seconds, 1);
    ++counted;
  }
  ValidationScore score;
  if (counted) {
    score.tau = tau_sum / static_cast<double>(counted);
    score.top1 = top1_sum / static_cast<double>(counted);
  }
  return score;
}

std::vector<torch::Tensor> snapshot(GnnModel& model) {
  std::vector<torch::Tensor> saved;
  for (const auto& p : model->parameters()) saved.push_back(p.detach().clone());
  for (const auto& b : model->buffers()) saved.push_back(b.detach().clone());
  return saved;
}

// The caller's selection score of the model as it stands (0 without one). Cached embeddings were
// dropped by the last training step, so predict() sees the current weights.
double extra_selection(GnnCostModel& model, const SelectionScore& selection) {
  if (!selection) return 0.0;
  const double score = selection(model);
  return std::isnan(score) ? 0.0 : score;
}

void restore(GnnModel& model, const std::vector<torch::Tensor>& saved) {
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (auto& p : model->parameters()) p.copy_(saved[i++]);
  for (auto& b : model->buffers()) b.copy_(saved[i++]);
}

}  // namespace

nlohmann::ordered_json TrainReport::to_json() const {
  return {{"epochs", epochs},
          {"best_epoch", best_epoch},
          {"best_validation_tau", std::isfinite(best_validation_tau) ? nlohmann::ordered_json(best_validation_tau) : nullptr},
          {"best_validation_top1_slowdown",
           std::isfinite(best_validation_top1) ? nlohmann::ordered_json(best_validation_top1) : nullptr},
          {"best_selection_score", std::isfinite(best_selection_score) ? nlohmann::ordered_json(best_selection_score) : nullptr},
          {"final_train_loss", final_train_loss},
          {"seconds", seconds},
          {"samples", samples},
          {"config_holdout", config_holdout}};
}

std::unique_ptr<GnnCostModel> train_gnn(const std::vector<const MeasuredKernel*>& train,
                                        const std::vector<const MeasuredKernel*>& validation, const GnnParams& params,
                                        const TrainOptions& options, std::ostream* progress, TrainReport* report,
                                        const SelectionScore& selection) {
  const auto start = Clock::now();
  Rng split_rng(options.seed ^ 0x5eedULL);
  std::vector<TrainKernel> train_kernels;
  std::vector<ValidationKernel> validation_kernels;
  const bool config_holdout = validation.empty();
  for (const MeasuredKernel* measured : train) {
    if (!measured->space) continue;
    std::vector<std::size_t> ok = ok_indices(*measured);
    if (ok.size() < 2) continue;
    std::vector<std::size_t> held;
    // Early stopping needs data the steps never see; kernels with fewer than 5 configs are too
    // small to spare any.
    if (config_holdout && ok.size() >= 5 && options.validation_fraction > 0) {
      shuffle(ok, split_rng);
      const auto count = std::max<std::size_t>(1, static_cast<std::size_t>(options.validation_fraction * ok.size()));
      held.assign(ok.end() - static_cast<std::ptrdiff_t>(count), ok.end());
      ok.resize(ok.size() - count);
      validation_kernels.push_back(validation_kernel(*measured, held, options.validation_configs, split_rng));
    }
    TrainKernel t{measured, {}};
    for (std::size_t i : ok) t.measurements.push_back(measured->measurements[i]);
    train_kernels.push_back(std::move(t));
  }
  if (train_kernels.empty()) throw std::invalid_argument("training needs a kernel with at least two successful measurements");
  for (const MeasuredKernel* measured : validation)
    if (measured->space) validation_kernels.push_back(validation_kernel(*measured, ok_indices(*measured), options.validation_configs, split_rng));

  auto model = std::make_unique<GnnCostModel>(params, FeatureVocabulary::build(train, params.min_opcode_count), options);
  GnnCostModel::State& s = model->state();
  std::vector<const Kernel*> kernels;
  for (const TrainKernel& t : train_kernels) kernels.push_back(&t.measured->kernel);
  for (const ValidationKernel& v : validation_kernels) kernels.push_back(&v.measured->kernel);
  s.cache.warm(kernels);

  std::vector<GnnCostModel::State::Group> statistics_sample;
  for (const TrainKernel& t : train_kernels)
    statistics_sample.push_back(sample_group(t.measured->kernel, *t.measured->space, t.measurements,
                                             kStatisticsConfigs / train_kernels.size() + 1, s.rng));
  s.fit_output_offset(statistics_sample);
  s.fit_input_statistics(statistics_sample);

  TrainReport result;
  result.config_holdout = config_holdout;
  // Epoch 0 is the untrained model: a hybrid's is the analytical model itself (its correction
  // starts at zero), which training must beat on validation to replace.
  const ValidationScore initial = validation_score(s, validation_kernels);
  const double initial_extra = extra_selection(*model, selection);
  double best_selection = -std::numeric_limits<double>::infinity();
  result.best_validation_tau = -std::numeric_limits<double>::infinity();
  result.best_validation_top1 = std::numeric_limits<double>::quiet_NaN();
  if (!std::isnan(initial.tau) || selection) {
    best_selection = (std::isnan(initial.tau) ? 0.0 : initial.selection(options.select_top1_weight)) + initial_extra;
    result.best_validation_tau = initial.tau;
    result.best_validation_top1 = initial.top1;
    if (selection) result.best_selection_score = initial_extra;
  }
  std::vector<torch::Tensor> best = snapshot(s.model);
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    double loss_sum = 0.0;
    for (int step = 0; step < options.steps_per_epoch; ++step) {
      std::vector<GnnCostModel::State::Group> groups;
      for (int k = 0; k < options.kernels_per_step; ++k) {
        const TrainKernel& t = train_kernels[uniform_index(s.rng, train_kernels.size())];
        groups.push_back(sample_group(t.measured->kernel, *t.measured->space, t.measurements,
                                      static_cast<std::size_t>(options.configs_per_kernel), s.rng));
        result.samples += groups.back().configs.size();
      }
      loss_sum += s.train_step(groups);
    }
    result.epochs = epoch;
    result.final_train_loss = loss_sum / options.steps_per_epoch;
    const ValidationScore score = validation_score(s, validation_kernels);
    const double extra = extra_selection(*model, selection);
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (progress) {
      char line[200];
      std::snprintf(line, sizeof line, "epoch %3d/%d  train loss %.4f  validation tau %.4f  top-1 %.2f%%",
                    epoch, options.epochs, result.final_train_loss, score.tau, 100.0 * score.top1);
      *progress << line;
      if (selection) *progress << "  selection score " << extra;
      std::snprintf(line, sizeof line, "  time %.1f s\n", elapsed);
      *progress << line << std::flush;
    }
    // Without validation data (NaN tau) nor a selection score the last epoch is kept.
    const bool scored = !std::isnan(score.tau) || selection;
    const double selected = (std::isnan(score.tau) ? 0.0 : score.selection(options.select_top1_weight)) + extra;
    if (!scored || selected > best_selection) {
      if (scored) {
        best_selection = selected;
        result.best_validation_tau = score.tau;
        result.best_validation_top1 = score.top1;
        if (selection) result.best_selection_score = extra;
      }
      result.best_epoch = epoch;
      best = snapshot(s.model);
    } else if (epoch - result.best_epoch >= options.patience) {
      break;
    }
    if (options.time_limit_seconds > 0 && elapsed >= options.time_limit_seconds) {
      if (progress) *progress << "time limit of " << options.time_limit_seconds << " s reached\n";
      break;
    }
  }
  restore(s.model, best);
  s.invalidate(false);
  s.calibrate(statistics_sample);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (report) *report = result;
  return model;
}

}  // namespace perftune
