#include "surrogate/training/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>

#include "surrogate/evaluation/model_evaluation.h"
#include "surrogate/evaluation/ranking_metrics.h"
#include "surrogate/gnn/correction_shrinkage.h"
#include "surrogate/gnn/gnn_state.h"
#include "surrogate/training/config_holdout.h"
#include "surrogate/training/program_sum_sampler.h"

namespace perftune {

namespace {

using Clock = std::chrono::steady_clock;
// Configs (over all training kernels) whose features set the input standardization; the mean and
// std of ~20k rows are stable to a few percent, and featurizing them takes milliseconds.
constexpr std::size_t kStatisticsConfigs = 20000;

struct TrainKernel {
  const MeasuredKernel* measured;
  std::vector<Measurement> measurements;  // successful ones used for training
  // With fast groups (TrainOptions::fast_share > 0) `measurements` is sorted fastest first and
  // the first `fast_count` of them are the fast end a group favours; 0 otherwise.
  std::size_t fast_count = 0;
  // TrainOptions::tiling_in_groups: the kernel's measurement under the training programs' tiling,
  // which every group holds.
  std::optional<Measurement> tiling;
};

struct ValidationKernel {
  const MeasuredKernel* measured;
  std::vector<Config> configs;
  std::vector<double> seconds;
};

// What one member trains and validates on (pointers into the shared pools).
struct MemberData {
  std::vector<const TrainKernel*> train;
  std::vector<const ValidationKernel*> validation;
  std::vector<std::string> held_out_kernels;  // validation "kernels" only
};

ValidationKernel validation_kernel(const MeasuredKernel& kernel, std::vector<std::size_t> ok, std::size_t limit, Rng& rng) {
  ValidationKernel v{&kernel, {}, {}};
  if (ok.size() > limit) {
    shuffle_in_place(ok, rng);
    ok.resize(limit);
  }
  for (std::size_t i : ok) {
    v.configs.push_back(kernel.measurements[i].config);
    v.seconds.push_back(kernel.measurements[i].result.seconds);
  }
  return v;
}

// The index of the kernel's successful measurement (one of `ok`) of its config under `tiling`, if
// it has one (a tiling into another space, e.g. untiled for a kernel the backend cannot lower, has none).
std::optional<std::size_t> tiling_measurement(const MeasuredKernel& kernel, const std::vector<std::size_t>& ok,
                                              const KernelTiling& tiling) {
  const auto [space, config] = tiling(kernel.kernel);
  if (!space || space->knob_names() != kernel.space->knob_names()) return std::nullopt;
  for (std::size_t i : ok)
    if (kernel.measurements[i].config == config) return i;
  return std::nullopt;
}

TrainKernel train_kernel(const MeasuredKernel& kernel, const std::vector<std::size_t>& ok, const TrainOptions& options,
                         std::optional<std::size_t> tiling_index) {
  TrainKernel t{&kernel, {}};
  if (tiling_index) t.tiling = kernel.measurements[*tiling_index];
  for (std::size_t i : ok) t.measurements.push_back(kernel.measurements[i]);
  // A fast end and a rest need two configs; a kernel left with one by a large validation holdout
  // trains on uniform groups (std::clamp below needs 1 <= size - 1).
  if (options.fast_share > 0 && t.measurements.size() >= 2) {
    // Stable, so ties keep the recording's order and a seed gives the same groups every run.
    std::stable_sort(t.measurements.begin(), t.measurements.end(),
                     [](const Measurement& a, const Measurement& b) { return a.result.seconds < b.result.seconds; });
    const auto fast = static_cast<std::size_t>(std::ceil(options.fast_quantile * t.measurements.size()));
    t.fast_count = std::clamp<std::size_t>(fast, 1, t.measurements.size() - 1);
  }
  return t;
}

// One training group of `t`: uniform unless fast groups are on.
GnnCostModel::State::Group training_group(const TrainKernel& t, const TrainOptions& options, Rng& rng) {
  const auto count = static_cast<std::size_t>(options.configs_per_kernel);
  const MeasuredKernel& measured = *t.measured;
  GnnCostModel::State::Group group =
      t.fast_count == 0
          ? sample_group(measured.kernel, *measured.space, t.measurements, count, rng)
          : sample_fast_group(measured.kernel, *measured.space, t.measurements, t.fast_count, count, options.fast_share, rng);
  if (t.tiling) hold_in_group(group, *t.tiling);
  return group;
}

// The training data, split for early stopping as the options say. The pools are shared by all
// members; `members` says which entries each one trains and validates on.
struct TrainingData {
  std::vector<TrainKernel> train;
  std::vector<ValidationKernel> validation;
  std::vector<MemberData> members;
  bool config_holdout = false;
};

TrainingData split_training_data(const std::vector<const MeasuredKernel*>& train,
                                 const std::vector<const MeasuredKernel*>& validation, const TrainOptions& options,
                                 const KernelTiling* tiling) {
  Rng split_rng(options.seed ^ 0x5eedULL);
  TrainingData data;
  const std::size_t member_count = static_cast<std::size_t>(std::max(1, options.ensemble));
  std::vector<std::pair<const MeasuredKernel*, std::vector<std::size_t>>> usable;
  for (const MeasuredKernel* measured : train) {
    if (!measured->space) continue;
    std::vector<std::size_t> ok = ok_indices(measured->measurements);
    if (ok.size() >= 2) usable.emplace_back(measured, std::move(ok));
  }
  if (usable.empty()) throw std::invalid_argument("training needs a kernel with at least two successful measurements");
  // Reserved up front: members hold pointers into the pools.
  data.train.reserve(usable.size());
  data.validation.reserve(usable.size() + validation.size());
  const bool by_kernels = validation.empty() && options.validation == "kernels" && options.validation_fraction > 0;
  data.config_holdout = validation.empty() && !by_kernels;

  const auto find_tiling = [&](const MeasuredKernel& measured, const std::vector<std::size_t>& ok) {
    return options.tiling_in_groups ? tiling_measurement(measured, ok, *tiling) : std::nullopt;
  };

  if (!by_kernels) {
    for (auto& [measured, ok] : usable) {
      const std::optional<std::size_t> tiling_index = find_tiling(*measured, ok);
      // Early stopping needs data the steps never see (with fraction 0 nothing is drawn).
      const double fraction = data.config_holdout ? options.validation_fraction : 0.0;
      const std::vector<std::size_t> held = draw_config_holdout(ok, fraction, tiling_index, split_rng);
      if (!held.empty()) data.validation.push_back(validation_kernel(*measured, held, options.validation_configs, split_rng));
      data.train.push_back(train_kernel(*measured, ok, options, tiling_index));
    }
    for (const MeasuredKernel* measured : validation)
      if (measured->space)
        data.validation.push_back(validation_kernel(*measured, ok_indices(measured->measurements), options.validation_configs, split_rng));
    MemberData all;
    for (const TrainKernel& t : data.train) all.train.push_back(&t);
    for (const ValidationKernel& v : data.validation) all.validation.push_back(&v);
    data.members.assign(member_count, all);
    return data;
  }

  // Inner leave-kernels-out: a seeded order of the kernels; member m holds out the window of
  // `held` kernels starting at m * held (wrapping), so with enough members every kernel is held
  // out by one of them and trained on by the others.
  const std::size_t n = usable.size();
  if (n < 2)
    throw std::invalid_argument("validation by kernels needs at least two training kernels with two successful measurements");
  for (auto& [measured, ok] : usable) {
    data.train.push_back(train_kernel(*measured, ok, options, find_tiling(*measured, ok)));
    data.validation.push_back(validation_kernel(*measured, ok, options.validation_configs, split_rng));
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  shuffle_in_place(order, split_rng);
  const std::size_t held = std::clamp<std::size_t>(static_cast<std::size_t>(std::lround(options.validation_fraction * n)), 1, n - 1);
  for (std::size_t m = 0; m < member_count; ++m) {
    std::vector<bool> is_held(n, false);
    for (std::size_t j = 0; j < held; ++j) is_held[order[(m * held + j) % n]] = true;
    MemberData member;
    for (std::size_t i = 0; i < n; ++i) {
      if (is_held[i]) {
        member.validation.push_back(&data.validation[i]);
        member.held_out_kernels.push_back(data.train[i].measured->kernel.name());
      } else {
        member.train.push_back(&data.train[i]);
      }
    }
    data.members.push_back(std::move(member));
  }
  return data;
}

struct ValidationScore {
  double tau = std::numeric_limits<double>::quiet_NaN();
  double top1 = std::numeric_limits<double>::quiet_NaN();  // mean top-1 slowdown
  // What model selection maximizes: tau - top1_weight * top-1 slowdown.
  double selection(double top1_weight) const { return top1_weight > 0 ? tau - top1_weight * top1 : tau; }
};

ValidationScore validation_score(GnnCostModel::State& state, const std::vector<const ValidationKernel*>& kernels,
                                 std::size_t member) {
  double tau_sum = 0.0, top1_sum = 0.0;
  std::size_t counted = 0;
  GradientSync* sync = state.options.gradient_sync;  // data-parallel: each rank scores its share
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const ValidationKernel* v = kernels[i];
    if (v->configs.size() < 2 || (sync && !sync->owns(i))) continue;
    const auto pred =
        state.forward(v->measured->kernel, *v->measured->space, v->configs, /*training=*/false, member).contiguous();
    const std::vector<double> predicted(pred.data_ptr<float>(), pred.data_ptr<float>() + pred.numel());
    tau_sum += kendall_tau(predicted, v->seconds);
    top1_sum += top_k_slowdown(predicted, v->seconds, 1);
    ++counted;
  }
  if (sync) {
    float sums[3] = {static_cast<float>(tau_sum), static_cast<float>(top1_sum), static_cast<float>(counted)};
    sync->sum(sums);
    tau_sum = sums[0];
    top1_sum = sums[1];
    counted = static_cast<std::size_t>(sums[2]);
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

// One ensemble member as a cost model of its own: what a member's model selection scores, so that
// its choice of epoch rests on its own weights, not on the other members' (trained before it, or
// still untrained after it) diluting it.
class MemberModel : public CostModel {
 public:
  MemberModel(GnnCostModel& model, std::size_t member) : model_(model), member_(member) {}
  std::string name() const override { return model_.name(); }
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override {
    model_.predict_member(member_, kernel, space, configs, log_seconds);
  }

 private:
  GnnCostModel& model_;
  std::size_t member_;
};

// The caller's selection score of member `member` as it stands (0 without one). Cached embeddings
// were dropped by the last training step, so predictions see the current weights.
double extra_selection(GnnCostModel& model, std::size_t member, const SelectionScore& selection) {
  if (!selection) return 0.0;
  MemberModel view(model, member);
  const double score = selection(view);
  return std::isnan(score) ? 0.0 : score;
}

void restore(GnnModel& model, const std::vector<torch::Tensor>& saved) {
  torch::NoGradGuard no_grad;
  std::size_t i = 0;
  for (auto& p : model->parameters()) p.copy_(saved[i++]);
  for (auto& b : model->buffers()) b.copy_(saved[i++]);
}

// Every epoch of one member (epoch selection "shared"), epoch 0 first.
struct MemberEpochs {
  std::vector<std::vector<torch::Tensor>> weights;
  std::vector<ValidationScore> scores;
};

nlohmann::ordered_json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

// Trains member `member` on its data. Epoch selection "member": early stopping, the kept epoch's
// weights are restored; `selection` scores this member alone. "shared": every epoch runs and its
// weights and validation scores (epoch 0 first) go to `epochs`; the caller chooses one epoch for
// all members and restores it. `programs`, when set, adds programs_per_step sum groups to each step.
MemberReport train_member(GnnCostModel& cost_model, std::size_t member, const MemberData& data, const TrainOptions& options,
                          std::ostream* progress, TrainReport& total, const SelectionScore& selection, MemberEpochs* epochs,
                          ProgramSampler* programs) {
  GnnCostModel::State& s = cost_model.state();
  const auto start = Clock::now();
  MemberReport result;
  result.seed = member_seed(options.seed, member);
  result.validation_kernels = data.held_out_kernels;
  GnnModel& model = s.members.at(member).model;
  Rng& rng = s.members.at(member).rng;
  std::string prefix;
  if (s.members.size() > 1) prefix = "member " + std::to_string(member + 1) + "/" + std::to_string(s.members.size()) + "  ";
  // Epoch 0 is the untrained model: a hybrid's is the analytical model itself (its correction
  // starts at zero), which training must beat on validation to replace.
  const ValidationScore initial = validation_score(s, data.validation, member);
  const double initial_extra = extra_selection(cost_model, member, selection);
  double best_selection = -std::numeric_limits<double>::infinity();
  result.best_validation_tau = std::numeric_limits<double>::quiet_NaN();
  result.best_validation_top1 = std::numeric_limits<double>::quiet_NaN();
  if (!std::isnan(initial.tau) || selection) {
    best_selection = (std::isnan(initial.tau) ? 0.0 : initial.selection(options.select_top1_weight)) + initial_extra;
    result.best_validation_tau = initial.tau;
    result.best_validation_top1 = initial.top1;
    if (selection) result.best_selection_score = initial_extra;
  }
  std::vector<torch::Tensor> best = snapshot(model);
  if (epochs) {
    epochs->weights.push_back(best);
    epochs->scores.push_back(initial);
  }
  for (int epoch = 1; epoch <= options.epochs; ++epoch) {
    double loss_sum = 0.0;
    for (int step = 0; step < options.steps_per_epoch; ++step) {
      std::vector<GnnCostModel::State::Group> groups;
      for (int k = 0; k < options.kernels_per_step; ++k) {
        const TrainKernel& t = *data.train[uniform_index(rng, data.train.size())];
        groups.push_back(training_group(t, options, rng));
        total.samples += groups.back().configs.size();
      }
      std::vector<GnnCostModel::State::SumGroup> sums;
      for (int p = 0; programs && p < options.programs_per_step; ++p)
        sums.push_back(programs->sample(static_cast<std::size_t>(options.placements_per_program), rng));
      loss_sum += s.train_step(groups, member, sums);
    }
    result.epochs = epoch;
    total.final_train_loss = loss_sum / options.steps_per_epoch;
    const ValidationScore score = validation_score(s, data.validation, member);
    const double extra = extra_selection(cost_model, member, selection);
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (progress) {
      char line[240];
      std::snprintf(line, sizeof line, "%sepoch %3d/%d  train loss %.4f  validation tau %.4f  top-1 %.2f%%",
                    prefix.c_str(), epoch, options.epochs, total.final_train_loss, score.tau, 100.0 * score.top1);
      *progress << line;
      if (selection) *progress << "  selection score " << extra;
      std::snprintf(line, sizeof line, "  time %.1f s\n", elapsed);
      *progress << line << std::flush;
    }
    // Without validation data (NaN tau) nor a selection score the last epoch is kept.
    const bool scored = !std::isnan(score.tau) || selection;
    const double selected = (std::isnan(score.tau) ? 0.0 : score.selection(options.select_top1_weight)) + extra;
    if (epochs) {
      epochs->weights.push_back(snapshot(model));
      epochs->scores.push_back(score);
    } else if (!scored || selected > best_selection) {
      if (scored) {
        best_selection = selected;
        result.best_validation_tau = score.tau;
        result.best_validation_top1 = score.top1;
        if (selection) result.best_selection_score = extra;
      }
      result.best_epoch = epoch;
      best = snapshot(model);
    } else if (epoch - result.best_epoch >= options.patience) {
      break;
    }
    // Data-parallel ranks stop together: past the limit on any rank is past it on all.
    bool over_time = options.time_limit_seconds > 0 && elapsed >= options.time_limit_seconds;
    if (options.gradient_sync && options.time_limit_seconds > 0) {
      float over = over_time ? 1.0f : 0.0f;
      options.gradient_sync->sum(std::span<float>(&over, 1));
      over_time = over > 0;
    }
    if (over_time && epoch < options.epochs) {
      result.time_limit_hit = true;
      if (progress) *progress << prefix << "time limit of " << options.time_limit_seconds << " s reached\n";
      break;
    }
  }
  if (!epochs) restore(model, best);
  s.members.at(member).embeddings.clear();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

// The pooled choice (TrainOptions::epoch_selection "shared" and/or correction_scales): every
// member's validation kernels, predicted by that member (calibrated as it will predict) at each
// candidate epoch ("shared": all its epochs; else the one it kept), blended with the analytical
// model by each factor; the best (epoch, factor) by tau - select_top1_weight * top-1 over all of
// them is kept. Members end calibrated at the chosen epoch, the model at the chosen factor.
void choose_pooled(GnnCostModel::State& s, const TrainingData& data, const std::vector<GnnCostModel::State::Group>& statistics,
                   const std::vector<MemberEpochs>& epochs, const TrainOptions& options, TrainReport& report) {
  const bool shared = !epochs.empty();
  // Members cut short by the time limit have fewer epochs: the candidates are the epochs all ran.
  std::size_t common = shared ? epochs.front().weights.size() : 1;
  for (const MemberEpochs& member : epochs) common = std::min(common, member.weights.size());
  std::vector<ShrinkageKernel> pooled;
  for (std::size_t m = 0; m < s.members.size(); ++m) {
    const std::size_t first = pooled.size();
    for (const ValidationKernel* v : data.members[m].validation) {
      ShrinkageKernel kernel;
      kernel.measured = v->seconds;
      kernel.weight = kernel_selection_weight(options.select_kernel_weight, v->seconds.size());
      if (s.analytical) {
        const auto prior = analytical_log_seconds(
            s.config_features(v->measured->kernel, *s.cache.get(v->measured->kernel), *v->measured->space, v->configs)).contiguous();
        kernel.analytical.assign(prior.data_ptr<float>(), prior.data_ptr<float>() + prior.numel());
      } else {
        kernel.analytical.assign(v->configs.size(), 0.0);  // only factor 1 applies: the blend is the prediction
      }
      pooled.push_back(std::move(kernel));
    }
    const std::size_t candidates = shared ? common : 1;
    for (std::size_t e = 0; e < candidates; ++e) {
      if (shared) {
        restore(s.members[m].model, epochs[m].weights[e]);
        s.calibrate(statistics, m);
      }
      for (std::size_t k = 0; k < data.members[m].validation.size(); ++k) {
        const ValidationKernel& v = *data.members[m].validation[k];
        const auto pred = s.forward(v.measured->kernel, *v.measured->space, v.configs, /*training=*/false, m).contiguous();
        pooled[first + k].learned.emplace_back(pred.data_ptr<float>(), pred.data_ptr<float>() + pred.numel());
      }
    }
  }
  const std::vector<double> scales = options.correction_scales.empty() ? std::vector<double>{1.0} : options.correction_scales;
  std::optional<ShrinkageChoice> choice;
  if (std::any_of(pooled.begin(), pooled.end(), [](const ShrinkageKernel& k) { return k.measured.size() >= 2; }))
    choice = choose_shrinkage(pooled, scales, options.select_top1_weight);
  // Without validation data: the last epoch all members ran, uncorrected.
  const std::size_t kept = choice ? choice->candidate : common - 1;
  s.correction_scale = choice ? choice->scale : 1.0;
  report.correction_scale = s.correction_scale;
  if (choice) {
    report.pooled_validation_tau = choice->tau;
    report.pooled_validation_top1 = choice->top1;
  }
  if (!shared) return;  // each member already holds its kept, calibrated epoch
  for (std::size_t m = 0; m < s.members.size(); ++m) {
    restore(s.members[m].model, epochs[m].weights[kept]);
    s.calibrate(statistics, m);
    MemberReport& member = report.members[m];
    member.best_epoch = static_cast<int>(kept);
    member.best_validation_tau = epochs[m].scores[kept].tau;
    member.best_validation_top1 = epochs[m].scores[kept].top1;
  }
  report.shared_epoch = static_cast<int>(kept);
}

}  // namespace

nlohmann::ordered_json MemberReport::to_json() const {
  nlohmann::ordered_json json{{"seed", seed},
                              {"epochs", epochs},
                              {"best_epoch", best_epoch},
                              {"best_validation_tau", finite_or_null(best_validation_tau)},
                              {"best_validation_top1_slowdown", finite_or_null(best_validation_top1)},
                              {"best_selection_score", finite_or_null(best_selection_score)},
                              {"seconds", seconds},
                              {"time_limit_hit", time_limit_hit}};
  if (!validation_kernels.empty()) json["validation_kernels"] = validation_kernels;
  return json;
}

nlohmann::ordered_json TrainReport::to_json() const {
  nlohmann::ordered_json json{{"epochs", epochs},
                              {"best_epoch", best_epoch},
                              {"best_validation_tau", finite_or_null(best_validation_tau)},
                              {"best_validation_top1_slowdown", finite_or_null(best_validation_top1)},
                              {"best_selection_score", finite_or_null(best_selection_score)},
                              {"final_train_loss", final_train_loss},
                              {"seconds", seconds},
                              {"samples", samples},
                              {"samples_per_second", seconds > 0 ? static_cast<double>(samples) / seconds : 0.0},
                              {"config_holdout", config_holdout},
                              {"correction_scale", correction_scale}};
  if (shared_epoch >= 0) json["shared_epoch"] = shared_epoch;
  if (std::isfinite(pooled_validation_tau)) {
    json["pooled_validation_tau"] = pooled_validation_tau;
    json["pooled_validation_top1_slowdown"] = pooled_validation_top1;
  }
  json["members"] = nlohmann::ordered_json::array();
  for (const MemberReport& member : members) json["members"].push_back(member.to_json());
  return json;
}

std::unique_ptr<GnnCostModel> train_gnn(const std::vector<const MeasuredKernel*>& train,
                                        const std::vector<const MeasuredKernel*>& validation, const GnnParams& params,
                                        const TrainOptions& options, std::ostream* progress, TrainReport* report,
                                        const SelectionScore& selection, const ProgramTraining* programs) {
  const bool shared = options.epoch_selection == "shared";
  if (!options.correction_scales.empty() && !params.analytical_feature)
    throw std::invalid_argument("correction_scales shrink the hybrid's correction: the model needs analytical_feature");
  if (shared && selection)
    throw std::invalid_argument("epoch selection \"shared\" pools validation kernels only; it takes no selection score");
  if (options.tiling_in_groups && (!programs || !programs->tiling))
    throw std::invalid_argument("tiling_in_groups needs the programs' tiling (train_gnn's `programs`)");
  const auto start = Clock::now();
  const TrainingData data = split_training_data(train, validation, options, programs ? &programs->tiling : nullptr);

  auto model = std::make_unique<GnnCostModel>(params, FeatureVocabulary::build(train, params.min_opcode_count), options);
  GnnCostModel::State& s = model->state();
  std::vector<const Kernel*> kernels;
  for (const TrainKernel& t : data.train) kernels.push_back(&t.measured->kernel);
  for (const ValidationKernel& v : data.validation) kernels.push_back(&v.measured->kernel);
  s.cache.warm(kernels);

  // Input standardization, output offset and calibration come from every training kernel, shared
  // by all members (features and a constant shift: neither changes a kernel's ranking).
  std::vector<GnnCostModel::State::Group> statistics_sample;
  for (const TrainKernel& t : data.train)
    statistics_sample.push_back(sample_group(t.measured->kernel, *t.measured->space, t.measurements,
                                             kStatisticsConfigs / data.train.size() + 1, s.rng));
  s.fit_output_offset(statistics_sample);
  s.fit_input_statistics(statistics_sample);

  std::optional<ProgramSampler> program_sums;
  if (options.program_weight > 0 && programs) program_sums.emplace(*programs);
  if (program_sums && progress) *progress << "training through the sums of " << program_sums->size() << " programs' placements\n";
  if (options.tiling_in_groups && progress) {
    const auto held = std::count_if(data.train.begin(), data.train.end(), [](const TrainKernel& t) { return t.tiling.has_value(); });
    *progress << held << " of " << data.train.size() << " training kernels hold their tiling config in every group\n";
  }
  ProgramSampler* sums = program_sums && !program_sums->empty() ? &*program_sums : nullptr;

  TrainReport result;
  result.config_holdout = data.config_holdout;
  std::vector<MemberEpochs> epochs(shared ? s.members.size() : 0);
  for (std::size_t m = 0; m < s.members.size(); ++m) {
    result.members.push_back(
        train_member(*model, m, data.members[m], options, progress, result, selection, shared ? &epochs[m] : nullptr, sums));
    if (!shared) s.calibrate(statistics_sample, m);
  }
  if (shared || !options.correction_scales.empty()) choose_pooled(s, data, statistics_sample, epochs, options, result);

  double tau_sum = 0.0, top1_sum = 0.0, selection_sum = 0.0;
  std::size_t validated = 0, selected = 0;
  for (const MemberReport& member : result.members) {
    result.epochs = std::max(result.epochs, member.epochs);
    result.best_epoch = std::max(result.best_epoch, member.best_epoch);
    if (std::isfinite(member.best_validation_tau)) {
      tau_sum += member.best_validation_tau;
      top1_sum += member.best_validation_top1;
      ++validated;
    }
    if (std::isfinite(member.best_selection_score)) {
      selection_sum += member.best_selection_score;
      ++selected;
    }
  }
  result.best_validation_tau = validated ? tau_sum / static_cast<double>(validated) : std::numeric_limits<double>::quiet_NaN();
  result.best_validation_top1 = validated ? top1_sum / static_cast<double>(validated) : std::numeric_limits<double>::quiet_NaN();
  if (selected) result.best_selection_score = selection_sum / static_cast<double>(selected);
  s.invalidate(false);
  s.options.gradient_sync = nullptr;  // the ranks were for this training; online updates are local
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (report) *report = result;
  return model;
}

}  // namespace perftune
