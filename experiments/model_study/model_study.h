#pragma once
// The model study: several EVAL.json studies (configs/eval/*.json) run one after the other through
// the same study runner as `perftune eval` (surrogate/study/study_runner.h), their tables gathered into
// one summary with the predictions behind them, for the scatter and per-kernel tau plots.
//
//   {"name": "model_study", "description": "...",
//    "studies": ["../eval/gemm_cross_gpu.json", ...],   (resolved against this file's folder)
//    "output": "../../runs/model_study"}
//
// An experiment file with "studies" is a model study; one with "spaces" is a tuning experiment
// (experiment.h). Both run with `perftune experiment FILE`.
//
// Output folder:
//   studies/NAME.json      one study's tables, per-kernel rows and folds (reused by a rerun while
//                          the eval config's text is unchanged; delete it to run the study again)
//   predictions/NAME.csv   per config: model,task,kernel,device,measured_seconds,predicted_seconds,config
//                          (surrogate/study/prediction_csv.h)
//   summary.json           {"kind": "model_study", "studies": [...], "skipped": [...]}
//   tables.md              every table in markdown (averages per task, then per-kernel rows)
//   plots/                 scatter_NAME and tau_NAME, PNG and SVG (model_study_plots.h)
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "surrogate/fusion/fusion_evaluation.h"

namespace perftune {

struct ModelStudyEntry {
  std::string name;    // the eval config's file stem; unique
  std::string config;  // resolved path of the EVAL.json
};

struct ModelStudy {
  std::string file;
  std::string name;
  std::string description;
  std::vector<ModelStudyEntry> studies;
  std::string output;  // resolved against the file's folder
};

// True if `json` (an experiment file's content) describes a model study.
bool is_model_study(const nlohmann::json& json);

// Throws InputError (file, JSON path, expectation): unknown keys, no studies, an eval config that
// does not exist, two studies with one name. The eval configs themselves are read when run.
ModelStudy parse_model_study(const nlohmann::json& json, const std::string& file);

struct ModelStudyOptions {
  std::string output;  // overrides study.output when non-empty
  bool plots = true;
  std::ostream* progress = nullptr;
  // How a fusion task's kernels are tiled when their predictions are summed (as in perftune eval).
  KernelTiling tiling = untiled;
};

// Runs every study and writes the output folder; returns summary.json's content. A study whose
// source file is absent (e.g. a corpus not collected yet) is skipped: named with the reason in the
// progress stream and in "skipped". Any other problem of an eval config throws its InputError.
nlohmann::ordered_json run_model_study(const ModelStudy& study, const ModelStudyOptions& options = {});

// Markdown: per study, each task's averages per model, then one row per held-out kernel.
std::string model_study_tables(const nlohmann::ordered_json& summary);

}  // namespace perftune
