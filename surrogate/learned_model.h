#pragma once
// The learned model as other layers see it: a CostModel, without libtorch in sight.
#include <memory>
#include <string>

#include "surrogate/cost_model.h"

namespace perftune {

// A trained model from a checkpoint written by `perftune train` (the JSON file): the GNN, or the
// tree model for a trees checkpoint (surrogate/trees/tree_cost_model.h). Throws
// InputError naming the file for a wrong schema version or mismatched weights.
std::unique_ptr<CostModel> load_learned_model(const std::string& checkpoint);
// An untrained model that learns online from CostModel::update (AutoTVM-style tuning from
// scratch). `params_path` is a configs/models/*.json file, or empty for the defaults; a hybrid one
// ("analytical_feature": true) must name its "analytical_device" spec object (std::invalid_argument otherwise).
std::unique_ptr<CostModel> make_online_learned_model(const std::string& params_path, std::uint64_t seed);

}  // namespace perftune
