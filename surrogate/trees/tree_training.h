#pragma once
// Trains the tree model on measured kernels: every kernel with two or more successful runtimes is
// one group of rows (its configs' first recordings), labelled per objective (tree_labels.h), and
// XGBoost boosts TreeParams::rounds trees over all groups (its "hist" method; a fixed seed and
// thread count give the same model).
#include <iosfwd>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/corpus.h"
#include "surrogate/trees/tree_cost_model.h"

namespace perftune {

struct TreeTrainReport {
  std::size_t kernels = 0;  // groups trained on
  std::size_t rows = 0;     // configs
  std::size_t features = 0;
  double seconds = 0.0;

  nlohmann::ordered_json to_json() const;
};

// Builds the vocabulary from `train` and trains a new model on it. Throws std::invalid_argument if
// no kernel has two successful measurements. Writes a progress line every 50 rounds to `progress`
// when non-null.
std::unique_ptr<TreeCostModel> train_trees(const std::vector<const MeasuredKernel*>& train, const TreeParams& params,
                                           std::ostream* progress, TreeTrainReport* report = nullptr);

}  // namespace perftune
