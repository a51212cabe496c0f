#pragma once
// A tree model's checkpoint JSON (what `perftune train` writes beside the XGBoost booster), read and
// checked member by member. It needs no libtorch, so the checkpoint fuzz target reads a checkpoint
// exactly as TreeCostModel::load does.
#include <string>

#include <nlohmann/json.hpp>

#include "surrogate/features/feature_vocabulary.h"
#include "surrogate/trees/tree_params.h"

namespace perftune {

inline constexpr const char* kTreeCheckpointFormat = "perftune-trees-checkpoint";

struct TreeCheckpointHeader {
  TreeParams params;
  FeatureVocabulary vocabulary;
  std::string booster;  // the booster file it names, beside the checkpoint (it exists)
};

// Whether the JSON is a tree checkpoint (a "format" of kTreeCheckpointFormat), not a GNN one.
bool is_tree_checkpoint(const nlohmann::json& json);

// Throws InputError naming the checkpoint (or the booster it names) and the member: not a tree
// checkpoint, another feature schema, parameters out of range, knob ranges no training writes, a
// booster name that is not a bare file name beside it, a booster file that is missing.
TreeCheckpointHeader read_tree_checkpoint_header(const std::string& checkpoint);

}  // namespace perftune
