#pragma once
// Runs what TRAIN.json / EVAL.json describe: load the sources, split, train (or load) the learned
// model per fold, and score every requested model on the held-out kernels.
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "surrogate/evaluation/model_evaluation.h"
#include "surrogate/fusion/fusion_evaluation.h"
#include "surrogate/gnn/gnn_cost_model.h"
#include "surrogate/study/study_config.h"
#include "surrogate/training/data_split.h"
#include "surrogate/training/trainer.h"
#include "surrogate/trees/tree_training.h"

namespace perftune {

struct LoadedSources {
  std::vector<Corpus> corpora;
  std::vector<SourcedKernel> kernels;  // point into corpora
};

// load_source() on every source (InputError from it propagates, naming the file).
LoadedSources load_sources(const StudyConfig& config);

// `perftune train`: the config's split must have one fold; trains on its training side as
// run_evaluation trains a fold (its validation side, if any, stops early; whole-program fusion
// measurements train only through the program sums, with `tiling` scheduling their kernels) and
// never sees the test side.
std::unique_ptr<GnnCostModel> train_from_config(const StudyConfig& config, const LoadedSources& sources,
                                                const KernelTiling& tiling, std::ostream* progress, TrainReport* report);

// `perftune train` with "learner": "trees": the tree model (surrogate/trees) on the same training
// side, validation kernels included (it has no early stopping).
std::unique_ptr<TreeCostModel> train_trees_from_config(const StudyConfig& config, const LoadedSources& sources,
                                                       std::ostream* progress, TreeTrainReport* report);

struct FoldReport {
  std::string fold;
  std::size_t train_kernels = 0, test_kernels = 0;
  std::size_t first_row = 0, rows = 0;  // the fold's rows of StudyResult::table.rows
  TrainReport training;  // zeros when the model came from a checkpoint
  bool from_checkpoint = false;
};

struct StudyResult {
  EvaluationTable table;
  std::vector<FoldReport> folds;
  double seconds = 0.0;

  // The table of one fold's rows (its held-out program's kernels and fusion configs).
  EvaluationTable fold_table(const FoldReport& fold) const;
};

// Shown every (model, held-out kernel) pair a cost model scored ("learned", "analytical"), with
// the model itself, so a caller can keep its predictions (the model study's scatter plots).
using ScoredModelObserver = std::function<void(const std::string& name, CostModel& model, const MeasuredKernel& kernel)>;

// `perftune eval`: for each fold, trains the learned model (or loads config.checkpoint; single
// fold only) and scores every model of config.models on the fold's test kernels: tile rows for
// kernels, fusion rows for programs measured under fusion configs (their kernels predicted with
// `tiling`). Fusion measurements never enter training: the model learns kernel runtimes.
StudyResult run_evaluation(const StudyConfig& config, const LoadedSources& sources, std::ostream* progress,
                           const KernelTiling& tiling = untiled, const ScoredModelObserver& observer = {});

}  // namespace perftune
