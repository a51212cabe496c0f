#pragma once
// Pre-training inside an experiment: a strategy whose model section reads
//   {"type": "learned", "pretrain": {"params": "../models/generic_knobs.json",
//                                    "train": {...TrainOptions...}, "on": "other_devices"}}
// is tuned, on each space S, with a GNN trained (as `perftune train` trains: surrogate/trainer.h)
// on every other space of the experiment that holds the same kernel (same kernel name, so gemm/*
// with gemm/*) measured on another device than S. S itself never enters its own model's training.
// One checkpoint per (space, pretrain section), shared by every seed and strategy using it, at
//   OUTPUT/models/SPACE.HASH.json (+ .pt)   HASH: of the resolved hyper-parameters and options
// written atomically and reused, not retrained, when the experiment restarts. The section may also
// hold a campaign model's "residual" (autotuner/model_spec.h): each run then corrects the loaded
// model with its own measurements; the checkpoint does not depend on it.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/corpus.h"
#include "ir/json_view.h"
#include "surrogate/gnn_params.h"
#include "surrogate/train_options.h"

namespace perftune {

struct PretrainSpec {
  GnnParams params;
  TrainOptions train;
  std::string on = "other_devices";  // the only selection rule so far (see pretraining_sources)
  std::string file;                  // the experiment file and the section's JSON path, for errors
  std::string place;                 // e.g. "$.strategies[4].model.pretrain"

  // What the model depends on besides its sources: resolved hyper-parameters, train options, rule.
  nlohmann::ordered_json identity() const;
  // 8 hex digits of a 64-bit FNV-1a hash of identity(): sections that train the same model share it.
  std::string identity_hash() const;
};

// Reads a strategy's model section if it has "pretrain" (else nullopt: an ordinary campaign model).
// `resolve` makes a path written in the experiment usable. Throws InputError naming the JSON path
// of an unknown key, a type other than "learned", an unknown "on" rule or bad hyper-parameters.
std::optional<PretrainSpec> parse_pretrain_spec(const JsonView& model,
                                                const std::function<std::string(const std::string&)>& resolve);

// What pre-training needs to know of a space: its kernel's name and the device it was measured on.
struct SpaceIdentity {
  std::string kernel;
  std::string device;
};

// Indices of the spaces a model for `held_out` trains on under "other_devices": the same kernel
// name on another device, in experiment order. Never `held_out`, never a space on its device.
std::vector<std::size_t> pretraining_sources(const std::vector<SpaceIdentity>& spaces, std::size_t held_out);

// OUTPUT/models/SPACE.HASH.json
std::string pretrained_checkpoint_path(const std::string& output, const std::string& space, const PretrainSpec& spec);

struct PretrainedModel {
  std::string space;
  std::string checkpoint;
  std::vector<std::string> sources;  // space names trained on
  bool reused = false;               // found on disk (a restart), not trained now
  nlohmann::ordered_json training;   // TrainReport::to_json() of when it was trained
};

// The model for `space` at `checkpoint`: loaded if a checkpoint of this identity and these sources
// is there, else trained on `sources` (name, measured kernel) and written atomically (the weights
// first, the JSON last, each renamed into place). Throws InputError naming the checkpoint if one
// there was trained on other sources, or naming spec.place if no source has two valid runtimes.
PretrainedModel ensure_pretrained(const PretrainSpec& spec, const std::string& checkpoint, const std::string& space,
                                  const std::vector<std::pair<std::string, const MeasuredKernel*>>& sources);

}  // namespace perftune
