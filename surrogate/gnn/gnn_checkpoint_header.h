#pragma once
// A GNN checkpoint's JSON (what `perftune train` writes beside the .pt weights), read and checked
// member by member before anything is allocated. It needs no libtorch, so the checkpoint fuzz target
// (clang, which cannot compile libtorch's headers) reads a checkpoint exactly as GnnCostModel::load does.
#include <string>

#include "surrogate/features/feature_vocabulary.h"
#include "surrogate/gnn/gnn_params.h"
#include "surrogate/gnn/train_options.h"

namespace perftune {

inline constexpr const char* kGnnCheckpointFormat = "perftune-gnn-checkpoint";

struct GnnCheckpointHeader {
  GnnParams params;
  FeatureVocabulary vocabulary;
  TrainOptions options;
  std::string weights;             // the .pt file it names, beside the checkpoint (it exists)
  double correction_scale = 1.0;   // in [0, 1]
};

// Throws InputError naming the checkpoint (or the weights file it names) and the member: not a
// checkpoint at all, another feature schema, hyper-parameters out of range, a vocabulary no training
// writes, a weights name that is not a bare file name beside it, a weights file that is missing.
GnnCheckpointHeader read_gnn_checkpoint_header(const std::string& checkpoint);

}  // namespace perftune
