#pragma once
// Nodes computed at import: when every input of a node is known (a constant, an initializer, a
// shape), ops that compute shapes and indices (Shape, Gather, Concat, Unsqueeze, Range, ...) and
// simple arithmetic are evaluated here, so the program holds only the tensor work and the ops that
// read a shape (Reshape, Expand, Slice) see a constant.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/node_context.h"

namespace perftune::frontend {

// Outputs of a node from its known inputs (absent optional inputs are null).
using Fold = std::function<std::vector<KnownTensor>(NodeContext&, const std::vector<const KnownTensor*>&)>;
using FoldTable = std::map<std::string, Fold>;

const FoldTable& folders();
// Folds `context`'s node when every present input is known and its op has a folder.
bool try_fold(NodeContext& context, const FoldTable& table);

}  // namespace perftune::frontend
