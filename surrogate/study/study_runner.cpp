#include "surrogate/study/study_runner.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>
#include <set>

#include "ir/input_error.h"
#include "ir/source.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/learned_model.h"
#include "surrogate/trees/tree_training.h"

namespace perftune {

namespace {
std::vector<const MeasuredKernel*> kernel_measurements(const std::vector<const MeasuredKernel*>& kernels) {
  std::vector<const MeasuredKernel*> out;
  for (const MeasuredKernel* k : kernels)
    if (!is_fusion_space(*k)) out.push_back(k);
  return out;
}
// The spec path the analytical model uses for a kernel: the config's, else the shipped one for the
// kernel's device; nullopt where none applies (e.g. a GPU of a Kernel Tuner cache).
std::optional<std::string> analytical_spec_path(const StudyConfig& config, const MeasuredKernel& kernel) {
  if (config.analytical_device) return *config.analytical_device;
  try {
    return device_spec_path(kernel.device, config.hardware_dir);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

// The device spec a model trained on `train` estimates with: the config's, else the one spec of the
// training kernels' device (std::invalid_argument where they have none or several).
DeviceSpec training_device_spec(const StudyConfig& config, const std::vector<const MeasuredKernel*>& train) {
  return load_device_spec(config.analytical_device ? *config.analytical_device : shared_device_spec_path(train, config.hardware_dir));
}

// The config's hyper-parameters with the hybrid feature's device spec filled in from the training
// kernels' device (one spec for all of them).
GnnParams resolved_params(const StudyConfig& config, const std::vector<const MeasuredKernel*>& train) {
  GnnParams params = config.params;
  if (!params.analytical_feature || params.analytical_device) return params;
  try {
    params.analytical_device = training_device_spec(config, train);
  } catch (const std::invalid_argument& error) {
    throw InputError(config.file, "$.model.analytical_feature", error.what());
  }
  return params;
}

// The fusion task's score for model selection (StudyConfig::fusion_selection_weight): the weight
// times the mean tau of the summed predictions over the fold's validation programs, or its
// training programs when it has none; empty without a weight or a program.
SelectionScore fusion_selection(const StudyConfig& config, const Fold& fold, const KernelTiling& tiling) {
  if (config.fusion_selection_weight <= 0) return {};
  std::vector<const MeasuredKernel*> programs;
  for (const auto* side : {&fold.validation, &fold.train})
    if (programs.empty())
      for (const MeasuredKernel* k : *side)
        if (is_fusion_space(*k)) programs.push_back(k);
  if (programs.empty()) return {};
  return [programs, weight = config.fusion_selection_weight, tiling](CostModel& model) {
    double sum = 0.0;
    std::size_t counted = 0;
    for (const MeasuredKernel* program : programs)
      if (const auto scores = score_fusion(model, *program, tiling); scores && std::isfinite(scores->kendall_tau)) {
        sum += scores->kendall_tau;
        ++counted;
      }
    return counted ? weight * sum / static_cast<double>(counted) : 0.0;
  };
}

// The fold's model as the config trains it: on its training side, through the sums of its
// training programs' placements (TrainOptions::program_weight), selected also on the fusion task
// (StudyConfig::fusion_selection_weight).
std::unique_ptr<GnnCostModel> train_fold(const StudyConfig& config, const Fold& fold, const KernelTiling& tiling,
                                         std::ostream* progress, TrainReport* report) {
  const auto train = kernel_measurements(fold.train);
  ProgramTraining programs{{}, tiling};
  for (const MeasuredKernel* k : fold.train)
    if (is_fusion_space(*k)) programs.programs.push_back(k);
  return train_gnn(train, kernel_measurements(fold.validation), resolved_params(config, train), config.train, progress,
                   report, fusion_selection(config, fold, tiling), &programs);
}

// The tree model of a fold, its analytical block for the training kernels' device where a spec
// applies (a GPU of a Kernel Tuner cache has none, nor a device whose spec file is missing: the
// block stays zero, and the progress says why). Unlike the GNN it learns
// whole programs' fusion configs as groups of their own: its scores rank, they do not add up.
std::unique_ptr<TreeCostModel> train_trees_fold(const StudyConfig& config, const Fold& fold, std::ostream* progress,
                                                TreeTrainReport* report) {
  std::vector<const MeasuredKernel*> train = fold.train;
  train.insert(train.end(), fold.validation.begin(), fold.validation.end());  // no early stopping: trained on
  TreeParams params = config.trees;
  if (!params.analytical_device) {
    try {
      params.analytical_device = training_device_spec(config, train);
    } catch (const std::exception& error) {  // no spec for the device, or its file is missing
      if (progress) *progress << "trees: no analytical block (" << error.what() << ")\n";
    }
  }
  return train_trees(train, params, progress, report);
}

}  // namespace

LoadedSources load_sources(const StudyConfig& config) {
  LoadedSources loaded;
  loaded.corpora.reserve(config.sources.size());
  for (const std::string& path : config.sources) loaded.corpora.push_back(load_source(path));
  for (std::size_t i = 0; i < loaded.corpora.size(); ++i)
    for (const MeasuredKernel& kernel : loaded.corpora[i].kernels) loaded.kernels.push_back({&kernel, config.sources[i]});
  if (loaded.kernels.empty()) throw InputError(config.file, "$.sources", "sources with measured kernels");
  return loaded;
}

namespace {
// `perftune train`'s one fold, its sides reported.
Fold training_fold(const StudyConfig& config, const LoadedSources& sources, std::ostream* progress) {
  auto folds = make_folds(sources.kernels, config.split, config.file);
  if (folds.size() != 1)
    throw InputError(config.file, "$.split.by", "a split with one training side (leave_one_out trains one model per "
                                                "kernel: use perftune eval)");
  const Fold& fold = folds.front();
  if (progress)
    *progress << "training on " << fold.train.size() << " kernels (" << fold.validation.size() << " for validation, "
              << fold.test.size() << " held out for testing, " << fold.left_out << " equal to a held-out one and left out)\n";
  return std::move(folds.front());
}
}  // namespace

std::unique_ptr<GnnCostModel> train_from_config(const StudyConfig& config, const LoadedSources& sources,
                                                const KernelTiling& tiling, std::ostream* progress, TrainReport* report) {
  return train_fold(config, training_fold(config, sources, progress), tiling, progress, report);
}

std::unique_ptr<TreeCostModel> train_trees_from_config(const StudyConfig& config, const LoadedSources& sources,
                                                       std::ostream* progress, TreeTrainReport* report) {
  return train_trees_fold(config, training_fold(config, sources, progress), progress, report);
}

namespace {
// The analytical model for a kernel's device: the config's spec, else the shipped one for the
// device; nullptr where no spec applies (e.g. a GPU of a Kernel Tuner cache).
CostModel* analytical_for(const StudyConfig& config, const MeasuredKernel& kernel,
                          std::map<std::string, std::unique_ptr<CostModel>>& models) {
  const auto path = analytical_spec_path(config, kernel);
  if (!path) return nullptr;
  auto it = models.find(*path);
  if (it == models.end()) it = models.emplace(*path, std::make_unique<AnalyticalModel>(load_device_spec(*path))).first;
  return it->second.get();
}
}  // namespace

StudyResult run_evaluation(const StudyConfig& config, const LoadedSources& sources, std::ostream* progress,
                           const KernelTiling& tiling, const ScoredModelObserver& observer) {
  std::map<std::string, std::unique_ptr<CostModel>> analytical_models;
  const auto start = std::chrono::steady_clock::now();
  const auto folds = make_folds(sources.kernels, config.split, config.file);
  std::map<const MeasuredKernel*, std::string> source_of;  // file names, for averages per test source
  for (const SourcedKernel& k : sources.kernels) source_of[k.kernel] = std::filesystem::path(k.source).filename().string();
  if (config.checkpoint && folds.size() != 1)
    throw InputError(config.file, "$.checkpoint", "no checkpoint with a leave_one_out split (each fold trains its own model)");
  StudyResult result;
  // "references": one column per reference name the test kernels hold, in name order.
  for (const std::string& name : config.models) {
    if (name != "references") {
      result.table.models.push_back(name);
      continue;
    }
    std::set<std::string> names;
    for (const Fold& fold : folds)
      for (const MeasuredKernel* kernel : fold.test)
        for (const auto& [reference, seconds] : kernel->references) names.insert(reference);
    result.table.models.insert(result.table.models.end(), names.begin(), names.end());
    result.table.references.assign(names.begin(), names.end());
  }
  auto wants = [&](const char* name) { return std::find(config.models.begin(), config.models.end(), name) != config.models.end(); };
  const bool wants_learned = wants("learned");
  for (const Fold& fold : folds) {
    FoldReport report{fold.name, fold.train.size(), fold.test.size(), result.table.rows.size(), 0, {}, false};
    std::unique_ptr<CostModel> learned;
    if (wants_learned) {
      if (config.checkpoint) {
        learned = load_learned_model(*config.checkpoint);
        report.from_checkpoint = true;
      } else {
        if (progress && folds.size() > 1) *progress << "fold " << fold.name << ": training on " << fold.train.size() << " kernels\n";
        if (progress && fold.left_out > 0)
          *progress << fold.left_out << " kernels of the training sources equal a held-out one: not trained on\n";
        learned = train_fold(config, fold, tiling, folds.size() > 1 ? nullptr : progress, &report.training);
        if (progress && folds.size() > 1) {
          *progress << "  " << report.training.epochs << " epochs (kept " << report.training.best_epoch
                    << "), best validation tau " << report.training.best_validation_tau;
          if (std::isfinite(report.training.best_selection_score))
            *progress << ", fusion selection score " << report.training.best_selection_score;
          if (std::isfinite(report.training.pooled_validation_tau))
            *progress << ", pooled validation tau " << report.training.pooled_validation_tau << " top-1 "
                      << 100.0 * report.training.pooled_validation_top1 << "% at correction factor "
                      << report.training.correction_scale;
          *progress << ", " << report.training.seconds << " s\n";
        }
      }
    }
    std::unique_ptr<TreeCostModel> trees;
    if (wants("trees")) {
      if (progress) *progress << "training the tree model on " << fold.train.size() << " kernels\n";
      trees = train_trees_fold(config, fold, folds.size() > 1 ? nullptr : progress, nullptr);
    }
    for (const MeasuredKernel* kernel : fold.test) {
      const bool fusion = is_fusion_space(*kernel);
      KernelRow row{fusion ? "fusion" : "tile", kernel->kernel.name(), kernel->device, 0, {}, source_of.at(kernel)};
      for (const Measurement& m : kernel->measurements) row.configs += m.result.ok() ? 1 : 0;
      if (row.configs < 2 || !kernel->space) continue;  // nothing to rank (e.g. a program's unmeasured fusion)
      for (const std::string& name : result.table.models) {
        std::optional<ModelScores> scores;
        CostModel* model = name == "learned"      ? learned.get()
                           : name == "trees"      ? trees.get()
                           : name == "analytical" ? analytical_for(config, *kernel, analytical_models)
                                                  : nullptr;
        if (model) scores = fusion ? score_fusion(*model, *kernel, tiling) : score_cost_model(*model, *kernel);
        else if (name == "default") scores = score_default(*kernel);
        else if (name == "random") scores = score_random(*kernel);
        else scores = score_reference(*kernel, name);
        if (scores) row.models[name] = *scores;
        if (scores && model && observer) observer(name, *model, *kernel);
      }
      result.table.rows.push_back(std::move(row));
    }
    report.rows = result.table.rows.size() - report.first_row;
    result.folds.push_back(report);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

EvaluationTable StudyResult::fold_table(const FoldReport& fold) const {
  EvaluationTable out;
  out.models = table.models;
  out.references = table.references;
  const auto first = table.rows.begin() + static_cast<std::ptrdiff_t>(fold.first_row);
  out.rows.assign(first, first + static_cast<std::ptrdiff_t>(fold.rows));
  return out;
}

}  // namespace perftune
