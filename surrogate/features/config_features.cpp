#include "surrogate/features/config_features.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace perftune {

namespace {
float log_feature(double value) { return static_cast<float>(std::log2(1.0 + std::max(0.0, value))) * kLogScale; }

// The share of a tile's `tile` points along one dimension of `extent` left over after whole blocks
// of `block`, both clamped to the extent as the Halide backend clamps a reduction accumulated
// inside another stage's tile (so lanes wider than the tile leave all of it in the tail).
float tail_share(std::int64_t tile, std::int64_t block, std::int64_t extent) {
  if (extent <= 0) return 0.0f;
  const std::int64_t t = tile > 0 ? std::min(tile, extent) : extent;
  const std::int64_t b = std::max<std::int64_t>(1, std::min(block, extent));
  return static_cast<float>(t % b) / static_cast<float>(t);
}
}  // namespace

ConfigFeaturizer::ConfigFeaturizer(const KernelGraphFeatures& kernel, const SearchSpace& space,
                                   const FeatureVocabulary& vocabulary)
    : roles_(knob_roles(space)),
      output_dims_(kernel.output_dims),
      element_bytes_(kernel.output_element_bytes),
      dimension_(space.dimension()),
      node_count_(kernel.node_count),
      edge_producer_(&kernel.edge_producer),
      edge_consumer_(&kernel.edge_consumer) {
  for (std::size_t k = 0; k < roles_.size(); ++k) {
    if (roles_[k].role == KnobRole::kFuse) ++fuse_knob_count_;
    if (space.knobs()[k].name == kVectorKnob) vector_knob_ = k;
    if (space.knobs()[k].name == kUnrollKnob) unroll_knob_ = k;
    if (space.knobs()[k].name == kVectorDimKnob) vector_dim_knob_ = k;
    if (space.knobs()[k].name == kRowsDimKnob) rows_dim_knob_ = k;
    if (roles_[k].role != KnobRole::kGeneric) continue;
    const Knob& knob = space.knobs()[k];
    if (const KnobNormalization* norm = vocabulary.knob(knob.name))
      generic_.push_back({k, norm->slot, norm->lo, norm->hi, &knob.values});
  }
}

void ConfigFeaturizer::featurize(std::span<const Config> configs, std::span<float> out) const {
  if (out.size() != configs.size() * kConfigFeatureWidth)
    throw std::invalid_argument("config feature buffer has the wrong size");
  std::fill(out.begin(), out.end(), 0.0f);
  const std::size_t rank = output_dims_.size();
  std::vector<std::int64_t> tiles(rank);  // this config's tile.out values, 0 where the space has none
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const Config& config = configs[c];
    if (config.values.size() != dimension_)
      throw std::invalid_argument("config " + config.to_string() + " has " + std::to_string(config.values.size()) +
                                  " values; the space has " + std::to_string(dimension_) + " knobs");
    float* row = out.data() + c * kConfigFeatureWidth;
    double tile_sum = 0.0, tile_product = 1.0, tile_count = 1.0;
    std::fill(tiles.begin(), tiles.end(), 0);
    bool any_tile = false;
    std::size_t fused = 0, inlined = 0, per_tile = 0;
    for (std::size_t k = 0; k < roles_.size(); ++k) {
      const double value = static_cast<double>(config.values[k]);
      switch (roles_[k].role) {
        case KnobRole::kTileOut: {
          const std::size_t d = roles_[k].index;
          any_tile = true;
          tile_sum += value;
          tile_product *= std::max(1.0, value);
          const double extent = d < rank ? static_cast<double>(output_dims_[d]) : 0.0;
          if (extent > 0 && value > 0) tile_count *= std::ceil(extent / value);
          if (d < rank) tiles[d] = config.values[k];
          if (d < kMaxFeatureRank) {
            row[3 * d] = 1.0f;
            row[3 * d + 1] = log_feature(value);
            row[3 * d + 2] = extent > 0 ? static_cast<float>(std::min(value / extent, 4.0)) : 0.0f;
          }
          break;
        }
        case KnobRole::kTileReduction:
          row[3 * kMaxFeatureRank + 3] = 1.0f;
          row[3 * kMaxFeatureRank + 4] = log_feature(value);
          break;
        case KnobRole::kFuse:
          fused += value != 0 ? 1 : 0;
          inlined += value == 1 ? 1 : 0;
          per_tile += value == 2 ? 1 : 0;
          break;
        case KnobRole::kGeneric: break;
      }
    }
    if (any_tile) {
      row[3 * kMaxFeatureRank] = log_feature(tile_sum);
      row[3 * kMaxFeatureRank + 1] = log_feature(tile_product);
      row[3 * kMaxFeatureRank + 2] = log_feature(tile_count);
      row[3 * kMaxFeatureRank + 5] = log_feature(tile_product * static_cast<double>(element_bytes_));
    }
    for (const GenericKnob& g : generic_) {
      const std::int64_t value = config.values[g.knob];
      float* slot = row + kTileFeatureWidth + 3 * g.slot;
      slot[0] = 1.0f;
      const double range = g.hi - g.lo;
      slot[1] = range > 0 ? static_cast<float>((signed_log2(static_cast<double>(value)) - g.lo) / range) : 0.0f;
      const auto& domain = *g.domain;
      const auto it = std::lower_bound(domain.begin(), domain.end(), value);
      slot[2] = domain.size() > 1 ? static_cast<float>(it - domain.begin()) / static_cast<float>(domain.size() - 1) : 0.0f;
    }
    if (fuse_knob_count_ > 0) {
      const auto share = [&](std::size_t count) { return static_cast<float>(count) / static_cast<float>(fuse_knob_count_); };
      float* fuse = row + kFuseFeatureOffset;
      fuse[0] = share(fused);
      fuse[1] = log_feature(static_cast<double>(fused));
      fuse[2] = share(inlined);
      fuse[3] = share(per_tile);
    }
    float* tail = row + kTailFeatureOffset;
    // The lanes run along vector.dim (default the innermost), the unrolled rows along rows.dim
    // (default rows_dim()'s).
    const std::size_t lanes = vector_dim_knob_ ? static_cast<std::size_t>(config.values[*vector_dim_knob_]) : rank - 1;
    const std::size_t rows = rows_dim(rank, lanes, rows_dim_knob_ ? config.values[*rows_dim_knob_] : -1);
    if (vector_knob_ && rank >= 1 && lanes < rank) tail[0] = tail_share(tiles[lanes], config.values[*vector_knob_], output_dims_[lanes]);
    if (unroll_knob_ && rank >= 2) tail[1] = tail_share(tiles[rows], config.values[*unroll_knob_], output_dims_[rows]);
  }
}

void ConfigFeaturizer::node_fused_flags(std::span<const Config> configs, std::span<float> out) const {
  if (out.size() != configs.size() * node_count_) throw std::invalid_argument("fused-flag buffer has the wrong size");
  std::fill(out.begin(), out.end(), 0.0f);
  if (fuse_knob_count_ == 0) return;
  for (std::size_t c = 0; c < configs.size(); ++c)
    for (std::size_t k = 0; k < roles_.size(); ++k) {
      if (roles_[k].role != KnobRole::kFuse || configs[c].values[k] == 0) continue;
      const std::size_t e = roles_[k].index;
      if (e >= edge_producer_->size()) continue;
      out[c * node_count_ + static_cast<std::size_t>((*edge_producer_)[e])] = 1.0f;
      out[c * node_count_ + static_cast<std::size_t>((*edge_consumer_)[e])] = 1.0f;
    }
}

}  // namespace perftune
