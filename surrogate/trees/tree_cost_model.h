#pragma once
// The gradient-boosted tree model as a CostModel: an XGBoost booster over TreeFeaturizer rows,
// pre-trained on a corpus (tree_training.h), optionally corrected online by a few shallow trees
// fitted to the target kernel's own measurements on top of its pre-trained scores. Scores rank
// configs within a kernel; they are not seconds.
//
// Checkpoint: CHECKPOINT.json ({"format": "perftune-trees-checkpoint", the feature schema, params,
// vocabulary, "booster": file name}) and the booster beside it in XGBoost's binary JSON (.ubj).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "surrogate/cost_model.h"
#include "surrogate/trees/tree_features.h"
#include "surrogate/trees/tree_params.h"
#include "surrogate/trees/xgboost_handles.h"

namespace perftune {

class TreeCostModel : public CostModel {
 public:
  TreeCostModel(TreeParams params, TreeFeaturizer featurizer, std::unique_ptr<XgbBooster> booster);
  ~TreeCostModel() override;

  std::string name() const override { return "trees"; }
  void predict(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs,
               std::span<float> log_seconds) override;
  // Refits the kernel's online trees (TreeParams::online_rounds) to every measurement of it so far.
  void update(const Kernel& kernel, const SearchSpace& space, std::span<const Measurement> measurements) override;
  bool predicts_absolute_time() const override { return false; }

  const TreeParams& params() const { return params_; }
  // Writes the booster, then the JSON (each atomically), `extra` under "extra".
  void save(const std::string& checkpoint, const nlohmann::ordered_json& extra = {}) const;
  // InputError naming the file for something that is no trees checkpoint, another feature schema,
  // a missing booster file or one whose feature count does not match.
  static std::unique_ptr<TreeCostModel> load(const std::string& checkpoint);
  // True if a checkpoint's parsed JSON says it is a trees checkpoint (false for anything else).
  static bool is_checkpoint(const nlohmann::json& json);

 private:
  struct Target;
  // The pre-trained margins of `rows` (higher: faster for a ranking objective).
  std::vector<float> margins(const std::vector<float>& rows) const;

  TreeParams params_;
  TreeFeaturizer featurizer_;
  std::unique_ptr<XgbBooster> booster_;
  std::map<std::string, std::unique_ptr<Target>> targets_;  // by Kernel::key()
  std::mutex mutex_;  // XGBoost's prediction buffer is per booster
};

}  // namespace perftune
