#pragma once
// TRAIN.json / EVAL.json: which sources, which split, which model and how to train it.
//   {"sources": ["kernel_tuner/gemm/RTX_2080_Ti.json.gz", ...],
//    "split": {"by": "device", "test": ["TITAN RTX"]},
//    "model": "configs/models/tpugraphs_baseline.json" (or an inline object),
//    "train": {"epochs": 30, ...},
//    "models": ["learned", "trees", "analytical", "default", "random", "references"],   (eval only;
//               "trees": the gradient-boosted tree model, trained on the same side as "learned";
//               "references": a column per reference the test kernels' logs hold, e.g. each
//               Halide autoscheduler's pick, scored by its slowdown against the best measured config)
//    "trees": "configs/models/trees.json" (or an inline object; optional: the tree model's
//             hyper-parameters, surrogate/trees/tree_params.h),
//    "learner": "gnn" or "trees"  (train only; optional, default "gnn": which model perftune train writes),
//    "analytical_device": "configs/hardware/tpu_v3.json"  (optional; default: the spec
//                                                          device_spec_path() names for each kernel's device)
//    "checkpoint": "runs/gemm.json",                  (train: written; eval: loaded instead of training)
//    "fusion_selection_weight": 1.0}                  (eval; optional, default 0: model selection adds this
//                                                      weight times the fusion task's mean tau over the
//                                                      fold's validation programs, else its training
//                                                      programs; never the held-out ones)
// A source may be a folder of record logs, e.g. an experiment's output ("runs/halide_live"): each
// space it measured, every run's configs merged (ir/record_folder.h); "split": {"by": "device",
// "test": ["halide_live"]} holds it out by the folder's name, so a checkpoint is ranked on what a
// live campaign measured.
// Relative paths are tried against the working directory, the config's folder, the project root
// (two folders above a configs/<kind>/ file) and, for sources, the shared data folder.
#include <optional>
#include <string>
#include <vector>

#include "surrogate/gnn/gnn_params.h"
#include "surrogate/gnn/train_options.h"
#include "surrogate/training/data_split.h"
#include "surrogate/trees/tree_params.h"

namespace perftune {

struct StudyConfig {
  std::string file;
  std::vector<std::string> sources;  // resolved
  SplitSpec split;
  GnnParams params;
  TrainOptions train;
  TreeParams trees;
  std::string learner = "gnn";  // what perftune train trains: "gnn" (params, train) or "trees"
  std::optional<std::string> checkpoint;
  std::optional<std::string> analytical_device;  // resolved DeviceSpec path for "analytical"
  std::string hardware_dir;                      // configs/hardware, for the per-device default spec
  std::vector<std::string> models = {"learned", "default", "random"};
  double fusion_selection_weight = 0.0;

  // Throws InputError naming the file and JSON path: unknown keys, a source that does not
  // exist anywhere, an unknown model name, a malformed split or hyper-parameter.
  static StudyConfig load(const std::string& path);
};

// The model names `perftune eval` knows.
const std::vector<std::string>& known_model_names();

}  // namespace perftune
