#include "surrogate/learned_model.h"

#include "ir/input_error.h"
#include "ir/json_view.h"
#include "surrogate/gnn/gnn_cost_model.h"
#include "surrogate/trees/tree_cost_model.h"

namespace perftune {

std::unique_ptr<CostModel> load_learned_model(const std::string& checkpoint) {
  nlohmann::json json;
  try {
    json = parse_json_file(checkpoint);
  } catch (const InputError&) {
    return GnnCostModel::load(checkpoint);  // which names what a checkpoint is
  }
  if (TreeCostModel::is_checkpoint(json)) return TreeCostModel::load(checkpoint);
  return GnnCostModel::load(checkpoint);
}

std::unique_ptr<CostModel> make_online_learned_model(const std::string& params_path, std::uint64_t seed) {
  TrainOptions options;
  options.seed = seed;
  return std::make_unique<GnnCostModel>(params_path.empty() ? GnnParams{} : GnnParams::load(params_path),
                                        FeatureVocabulary{}, options);
}

}  // namespace perftune
