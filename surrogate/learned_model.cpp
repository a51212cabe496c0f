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
  } catch (const InputError& error) {
    // A file that cannot be read, or JSON with a flaw (a key twice), is reported as it is, whatever
    // its format; only text that is no JSON at all gets the explanation of what a checkpoint is.
    if (std::string(error.what()).find("valid JSON") == std::string::npos) throw;
    return GnnCostModel::load(checkpoint);  // which names what a checkpoint is
  }
  if (TreeCostModel::is_checkpoint(json)) return TreeCostModel::load(checkpoint);
  if (json.is_object() && json.contains("format") && json["format"].is_string() &&
      json["format"].get<std::string>().find("tree") != std::string::npos)
    return TreeCostModel::load(checkpoint);  // a tree checkpoint's misspelt format is named by the tree reader
  return GnnCostModel::load(checkpoint);
}

std::unique_ptr<CostModel> make_online_learned_model(const std::string& params_path, std::uint64_t seed) {
  TrainOptions options;
  options.seed = seed;
  return std::make_unique<GnnCostModel>(params_path.empty() ? GnnParams{} : GnnParams::load(params_path),
                                        FeatureVocabulary{}, options);
}

}  // namespace perftune
