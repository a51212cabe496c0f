#pragma once
// What the featurizer learned from the training corpus and a checkpoint must carry: the opcode
// vocabulary (ids for the learned embedding; rare or unseen opcodes share the "other" id 0) and,
// per generic knob name, its slot in the config vector and the log-range used to normalize it.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/corpus.h"
#include "ir/json_view.h"

namespace perftune {

// Bumped whenever a feature's meaning, order or scaling changes; stored in checkpoints, which
// refuse to load under another version. 2: the hybrid block of analytical estimates (config_features.h);
// 3: the shares of fuse knobs placed inlined and per tile; 4: the ragged-tail block.
inline constexpr int kFeatureSchemaVersion = 4;

// A checkpoint's "feature_schema_version" (the JsonView of that key): fails naming it unless it is
// this build's version, so a model is retrained rather than fed features it never learned.
void check_feature_schema(const JsonView& version);

// Generic knobs (e.g. Kernel Tuner parameters) get a fixed slot each so the config vector keeps
// one width; 24 covers the largest shipped space (CLBlast GEMM, 15 parameters) with room to grow.
inline constexpr std::size_t kMaxGenericKnobs = 24;

struct KnobNormalization {
  std::size_t slot = 0;
  double lo = 0.0, hi = 0.0;  // range of signed_log2(value) over the values seen
};

// sign(v) * log2(1 + |v|): defined for 0 and negatives (knobs such as SA/SB are 0/1 flags).
double signed_log2(double value);

class FeatureVocabulary {
 public:
  // Opcodes seen in at least `min_opcode_count` distinct kernels get their own id (sorted by
  // name, from 1); generic knobs of every space get a slot, in first-seen order, up to
  // kMaxGenericKnobs (more are ignored, which `dropped_knobs()` reports).
  static FeatureVocabulary build(std::span<const MeasuredKernel* const> kernels, int min_opcode_count);

  // 0 ("other") for an opcode outside the vocabulary.
  std::int64_t opcode_id(const std::string& opcode) const;
  std::size_t opcode_count() const { return opcodes_.size() + 1; }  // including "other"
  const std::vector<std::string>& opcodes() const { return opcodes_; }
  // nullptr for a knob without a slot.
  const KnobNormalization* knob(const std::string& name) const;
  const std::map<std::string, KnobNormalization>& knobs() const { return knobs_; }
  const std::vector<std::string>& dropped_knobs() const { return dropped_knobs_; }

  // Online learning meets kernels the vocabulary never saw: adds their opcodes (up to
  // `opcode_capacity` ids in all) and their generic knobs (free slots only). Returns true if
  // anything was added, which changes features (callers clear their caches).
  bool extend(const Kernel& kernel, const SearchSpace& space, std::size_t opcode_capacity);

  nlohmann::ordered_json to_json() const;
  // Throws InputError naming the file and JSON path of a malformed entry.
  static FeatureVocabulary from_json(const JsonView& json);

  bool operator==(const FeatureVocabulary&) const;

 private:
  void add_knobs(const SearchSpace& space);

  std::vector<std::string> opcodes_;  // id = index + 1
  std::map<std::string, std::int64_t> opcode_ids_;
  std::map<std::string, KnobNormalization> knobs_;
  std::vector<std::string> dropped_knobs_;
};

}  // namespace perftune
