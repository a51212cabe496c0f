#pragma once
// Config features (schema kFeatureSchemaVersion): one fixed-width float row per config, read
// through the knob naming convention (ir/knob_roles.h):
//   tile block    per output dim d < 6: present, log2 tile, tile / output extent; log2 of the tiles'
//                 sum and product, log2 of the tile count, tile.red (present, log2), log2 tile bytes
//   generic block per vocabulary slot: present, signed_log2(value) scaled to the knob's trained
//                 range, the value's index in this space's domain / (domain size - 1)
//   fuse block    fraction of the space's fuse.<e> knobs set, log2 of how many are set
//   tail block    the share of the innermost tile's points past its last full vector, and of the
//                 next dimension's rows past its last full unrolled block
//   hybrid block  the analytical model's estimate (surrogate/analytical/analytical_features.h), written by
//                 the learned model when GnnParams::analytical_feature is on; zeros here
// plus, for early join, a per-node "fused with a neighbour" flag.
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "ir/config.h"
#include "ir/knob_roles.h"
#include "ir/search_space.h"
#include "surrogate/analytical/analytical_features.h"
#include "surrogate/features/feature_vocabulary.h"
#include "surrogate/features/kernel_features.h"

namespace perftune {

inline constexpr std::size_t kTileFeatureWidth = 3 * kMaxFeatureRank + 6;
inline constexpr std::size_t kGenericFeatureWidth = 3 * kMaxGenericKnobs;
// Fuse knobs: the share fused and its log count, then the shares placed inlined (value 1) and per
// tile of the consumer (value 2; hardware/halide/halide_schedule.h): a producer inlined into a dot's
// epilogue and one computed per tile run at different speeds with the same ops fused.
inline constexpr std::size_t kFuseFeatureWidth = 4;
// Ragged tails (knobs vector and unroll): a reduction's update, or a producer computed per tile,
// runs its tail guarded, one point at a time, so a 28-wide tile of 16 lanes pays for 12 scalar
// points where a 16-wide one pays none. Halide's Adams2019 featurizes the same split (vectors
// against scalars); from log-scaled tiles and lanes a network would have to learn a modulus.
inline constexpr std::size_t kTailFeatureWidth = 2;
// Where each block starts in a config's row (the tile block at 0).
inline constexpr std::size_t kFuseFeatureOffset = kTileFeatureWidth + kGenericFeatureWidth;
inline constexpr std::size_t kTailFeatureOffset = kFuseFeatureOffset + kFuseFeatureWidth;
inline constexpr std::size_t kAnalyticalFeatureOffset = kTailFeatureOffset + kTailFeatureWidth;
inline constexpr std::size_t kConfigFeatureWidth = kAnalyticalFeatureOffset + kAnalyticalFeatureWidth;

// Prepared once per (kernel, space), then used for any number of configs; cheap per config
// (a binary search per generic knob), because search scores thousands per round.
class ConfigFeaturizer {
 public:
  ConfigFeaturizer(const KernelGraphFeatures& kernel, const SearchSpace& space, const FeatureVocabulary& vocabulary);

  // Writes configs.size() x kConfigFeatureWidth floats into `out` (row-major). Configs must have
  // the space's dimension (std::invalid_argument otherwise).
  void featurize(std::span<const Config> configs, std::span<float> out) const;
  // configs.size() x node_count flags: 1 where the node is an end of a fused edge.
  void node_fused_flags(std::span<const Config> configs, std::span<float> out) const;
  bool has_fuse_knobs() const { return fuse_knob_count_ > 0; }

 private:
  struct GenericKnob {
    std::size_t knob;  // index in the space
    std::size_t slot;
    double lo, hi;
    const std::vector<std::int64_t>* domain;
  };
  std::vector<KnobInfo> roles_;
  std::vector<GenericKnob> generic_;
  std::vector<std::int64_t> output_dims_;
  std::int64_t element_bytes_;
  std::size_t dimension_, fuse_knob_count_ = 0, node_count_;
  std::optional<std::size_t> vector_knob_, vector_dim_knob_, rows_dim_knob_, unroll_knob_;
  const std::vector<std::int64_t>* edge_producer_;
  const std::vector<std::int64_t>* edge_consumer_;
};

}  // namespace perftune
