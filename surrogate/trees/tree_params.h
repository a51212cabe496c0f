#pragma once
// Hyper-parameters of the gradient-boosted tree model (configs/models/trees.json): TVM's cost model
// family (AutoTVM, Ansor: XGBoost over per-config features with a ranking objective), trained on the
// same corpora and features as the GNN so the two can be set side by side.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/device_spec.h"
#include "ir/json_view.h"

namespace perftune {

// Bounds of what a config or checkpoint may give, against a typo or a hostile file, not tuned:
// a tree of depth 24 already has 16M leaves, more than any training set has rows, and XGBoost
// allocates per node; 100,000 trees are 300x the default, 1,000 online trees 50x.
inline constexpr int kMaxTreeDepth = 24;
inline constexpr int kMaxTreeRounds = 100000;
inline constexpr int kMaxOnlineRounds = 1000;
inline constexpr int kMaxTreeThreads = 1024;

struct TreeParams {
  // "rank:pairwise" (TVM's default: a pair loss within each kernel's configs) or "reg:squarederror"
  // on log seconds centred per kernel.
  std::string objective = "rank:pairwise";
  int rounds = 300;          // boosting rounds (trees)
  double eta = 0.1;          // shrinkage per tree
  int max_depth = 8;
  double subsample = 0.8;    // rows per tree
  double colsample = 0.8;    // features per tree
  int min_opcode_count = 2;  // as GnnParams: rarer opcodes share the "other" column
  int seed = 1;
  int threads = 0;           // training threads (0: one per core); prediction always uses one
  // Online: each update fits `online_rounds` trees of depth `online_depth` to the target kernel's
  // own measurements on top of the pre-trained scores (its base margin), refitted from scratch
  // each time; 0 keeps the pre-trained model as it is.
  int online_rounds = 20;
  int online_depth = 2;
  // The analytical block of the config features (surrogate/analytical/analytical_features.h); training fills
  // it from the study config as for the hybrid GNN; without it the block stays zero.
  std::optional<DeviceSpec> analytical_device;
  // The schedule features appended to each row (schedule_features.h), by the name the program
  // provides them under, e.g. "halide_loop_nest"; empty: none.
  std::string schedule_features;
  // Training rows per kernel: a kernel with more successful configs trains on this many, drawn at
  // random by the kernel (the same for every seed), to bound what its schedule features cost; 0: all.
  int max_configs_per_kernel = 0;

  nlohmann::ordered_json to_json() const;
  // Absent keys keep their default; unknown keys and out-of-range values are InputErrors naming the JSON path.
  static TreeParams from_json(const JsonView& json);
  static TreeParams load(const std::string& path);
};

}  // namespace perftune
