#pragma once
// Node features of one kernel graph (schema kFeatureSchemaVersion): what the GNN reads about each
// op, independent of the config. Plain floats, no libtorch, so they can be cached, compared byte
// for byte and computed in parallel.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/kernel.h"
#include "surrogate/features/feature_vocabulary.h"

namespace perftune {

// Dimensions beyond the sixth are folded into the sums and products only; XLA kernels of the
// TpuGraphs corpus have rank <= 6 (its node features also stop at 6 dims).
inline constexpr std::size_t kMaxFeatureRank = 6;
// log2 of sizes up to 2^32 stays within [0, 2] after this scale, a range MLPs train well on.
inline constexpr float kLogScale = 1.0f / 16.0f;
inline constexpr std::size_t kNodeFeatureWidth = 66;

struct KernelGraphFeatures {
  std::size_t node_count = 0;
  std::vector<std::int64_t> opcode_ids;  // node_count; 0 = "other"
  std::vector<float> node_features;      // node_count x kNodeFeatureWidth, row-major
  // Producer -> consumer edges between nodes (indices into the node list), in edge order.
  std::vector<std::int64_t> edge_producer, edge_consumer;
  std::vector<std::int64_t> output_dims;  // the root's shape (first tuple element for a tuple)
  std::int64_t output_element_bytes = 4;

  bool operator==(const KernelGraphFeatures&) const = default;
};

// Deterministic. A kernel without a body (known only by name, e.g. a Kernel Tuner kernel) is one
// node of opcode "other" with zero features, so config features alone decide its predictions.
KernelGraphFeatures featurize_kernel(const Kernel& kernel, const FeatureVocabulary& vocabulary);

}  // namespace perftune
