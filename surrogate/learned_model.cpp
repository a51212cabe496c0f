#include "surrogate/learned_model.h"

#include "surrogate/gnn/gnn_cost_model.h"

namespace perftune {

std::unique_ptr<CostModel> load_learned_model(const std::string& checkpoint) { return GnnCostModel::load(checkpoint); }

std::unique_ptr<CostModel> make_online_learned_model(const std::string& params_path, std::uint64_t seed) {
  TrainOptions options;
  options.seed = seed;
  return std::make_unique<GnnCostModel>(params_path.empty() ? GnnParams{} : GnnParams::load(params_path),
                                        FeatureVocabulary{}, options);
}

}  // namespace perftune
