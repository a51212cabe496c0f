#pragma once
// The "model" section of a campaign, as parsed: which CostModel ranks candidates.
//   {"type": "none"}                          model-free search
//   {"type": "analytical", "device": PATH}    roofline baseline over a device spec; without "device",
//                                             the shipped spec for the source's device, found in
//                                             ../hardware beside the campaign (configs/hardware)
//   {"type": "learned", "checkpoint": PATH}   GNN trained by `perftune train` (pre-trained), or the
//                                             tree model where the config's "learner" is "trees"
//   {"type": "learned"}                       the shipped model (models/halide_cpu.json, ir/data_path.h):
//                                             pre-trained on the committed Halide corpora, for a
//                                             campaign whose backend is "cpu"
//   {"type": "learned", "params": PATH}       GNN trained online from scratch by the tuner's updates
//                                             (AutoTVM-style); PATH is a configs/models/*.json
//   {"type": "learned", "checkpoints": [PATH, ...], "residual": {...}}
//                                             several pre-trained GNNs (e.g. one per source device),
//                                             each a prior column of one residual, which learns on
//                                             the target how much to trust each (needs "residual")
//   {"type": "recorded", "sources": [PATH, ...]}  a reference, not a model: each config's time as
//                                             recorded on other devices (surrogate/transfer/recorded_model.h),
//                                             e.g. to bound what learned priors could give; several
//                                             need "residual"
//   {"type": "gaussian_process", "residual": {...}}  no prior data: Bayesian optimization on the
//                                             target's own measurements (the residual over a flat
//                                             prior, surrogate/transfer/flat_prior.h), its first batch
//                                             space-filling (BatchPolicyOptions::space_filling_start)
//   a learned or recorded model may add "residual": {...}: the tuner's measurements fit a
//   Gaussian-process correction of it (surrogate/transfer/target_residual.h); its keys, defaults and
//   ranges are residual_settings()'s, documented in docs/settings.md.
// Parsing is kept apart from building the model (autotuner/factories/model_factory.h) so that it compiles
// and links without libtorch: the fuzz targets (fuzz/) are built with clang, which cannot compile
// libtorch 1.13's headers against GCC 12's libstdc++.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/json_view.h"
#include "ir/settings_table.h"
#include "search/batch_policy.h"
#include "surrogate/transfer/target_residual_options.h"

namespace perftune {

// A model's "residual" object: the residual's own options, and the batch policy its posterior
// makes possible (search/batch_policy.h).
struct ResidualSpec {
  TargetResidualOptions model;
  BatchPolicyOptions batch;
};

struct ModelSpec {
  std::string type;        // "none", "analytical", "learned", "recorded"
  std::string checkpoint;  // learned only; resolved against the campaign's folder
  std::string file;
  std::string path;
  std::string device;        // analytical only: a device spec file, resolved like checkpoint
  std::string hardware_dir;  // analytical without "device": where the shipped specs are
  std::string params;        // learned online only: hyper-parameters file
  std::uint64_t seed = 1;    // learned online only: initial weights
  std::vector<std::string> checkpoints;  // learned with several priors ("checkpoints"), resolved likewise
  std::vector<std::string> recordings;  // recorded only: the recordings (sources), resolved
  bool residual = false;     // learned or recorded: wrapped in a TargetResidualModel
  ResidualSpec residual_options;  // with `residual`: as its "residual" object sets them
  bool shipped = false;  // learned: `checkpoint` is the shipped model, none being named
};

// A model's "residual" object, declared once (docs/settings.md).
const SettingsTable<ResidualSpec>& residual_settings();
// The keys beside "type" of each model type, declared once (docs/settings.md); paths as written.
const SettingsTable<ModelSpec>& analytical_model_settings();
const SettingsTable<ModelSpec>& learned_model_settings();
const SettingsTable<ModelSpec>& recorded_model_settings();
const SettingsTable<ModelSpec>& gaussian_process_settings();

// `resolve` turns a path written in the campaign into a usable one. Throws InputError naming the
// JSON path of an unknown key, a wrong type, or an unknown model.
ModelSpec parse_model_spec(const JsonView& view, const std::function<std::string(const std::string&)>& resolve);
// The tuner's batch policy for a campaign with this model: its residual's, and a space-filling
// first batch for a Gaussian process (no prior ranks it); the greedy top k otherwise.
BatchPolicyOptions batch_policy_options(const ModelSpec& spec);

}  // namespace perftune
