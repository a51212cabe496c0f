#pragma once
// The "pretrain" section of an experiment's strategy model (pretraining.h says what it means): its
// parsed form, which spaces a held-out space's model trains on, and where its checkpoint lives.
// Torch-free, so the experiment parser (and its fuzz target) need no libtorch.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/json_view.h"
#include "surrogate/gnn/gnn_params.h"
#include "surrogate/gnn/train_options.h"

namespace perftune {

struct PretrainSpec {
  GnnParams params;
  TrainOptions train;
  // What the model trains on: "other_devices" (see pretraining_sources), or "corpus": every kernel
  // of the record logs in `corpus` (e.g. corpus/halide_generated.jsonl.gz, programs no space
  // holds), one model for every space, live ones included.
  std::string on = "other_devices";
  std::vector<std::string> corpus;          // resolved paths, with "on": "corpus"
  std::vector<std::string> corpus_written;  // as the experiment writes them (the model's identity)
  // false: one model per held-out space, trained on all its sources pooled. true: one model per
  // source space, trained on it alone and shared by every held-out space it serves; each run's
  // residual combines its sources' models as priors (the model section must hold a "residual").
  // Pooling devices that rank the same config differently trains one model on conflicting targets.
  bool per_source = false;
  std::string hardware_dir;          // configs/hardware beside the experiment: a hybrid model's device spec
  std::string file;                  // the experiment file and the section's JSON path, for errors
  std::string place;                 // e.g. "$.strategies[4].model.pretrain"

  // What the model depends on besides its sources: resolved hyper-parameters, train options, rule
  // (and "per_source" when set, so checkpoints written before it existed keep their hash).
  nlohmann::ordered_json identity() const;
  // 8 hex digits of a 64-bit FNV-1a hash of identity(): sections that train the same model share it.
  std::string identity_hash() const;
};

// Reads a strategy's model section if it has "pretrain" (else nullopt: an ordinary campaign model).
// `resolve` makes a path written in the experiment usable. Throws InputError naming the JSON path
// of an unknown key, a type other than "learned", an unknown "on" rule, bad hyper-parameters, or
// "per_source" without a "residual" to combine the source models.
std::optional<PretrainSpec> parse_pretrain_spec(const JsonView& model,
                                                const std::function<std::string(const std::string&)>& resolve);

// What pre-training needs to know of a space: its kernel's name and the device it was measured on.
struct SpaceIdentity {
  std::string kernel;
  std::string device;
  bool source = true;  // may serve as a source (ExperimentSpace::serves_as_source)
};

// Indices of the spaces a model for `held_out` trains on under "other_devices": the same kernel
// name on another device, in experiment order, among those that may serve as sources. Never
// `held_out`, never a space on its device.
std::vector<std::size_t> pretraining_sources(const std::vector<SpaceIdentity>& spaces, std::size_t held_out);

// OUTPUT/models/SPACE.HASH.json: SPACE is the held-out space, or with per_source the one source
// space the model is trained on; with "on": "corpus" the one model is OUTPUT/models/corpus.HASH.json
// whatever `space`.
std::string pretrained_checkpoint_path(const std::string& output, const std::string& space, const PretrainSpec& spec);

}  // namespace perftune
