#pragma once
// The "model" section of a campaign: which CostModel ranks candidates.
//   {"type": "none"}                          model-free search
//   {"type": "analytical", "device": PATH}    roofline baseline over a device spec; without "device",
//                                             the shipped spec for the source's device, found in
//                                             ../hardware beside the campaign (configs/hardware)
//   {"type": "learned", "checkpoint": PATH}   GNN trained by `perftune train` (pre-trained)
//   {"type": "learned", "params": PATH}       GNN trained online from scratch by the tuner's updates
//                                             (AutoTVM-style); PATH is a configs/models/*.json
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ir/json_view.h"
#include "surrogate/cost_model.h"

namespace perftune {

struct ModelSpec {
  std::string type;        // "none", "analytical", "learned"
  std::string checkpoint;  // learned only; resolved against the campaign's folder
  std::string file;
  std::string path;
  std::string device;        // analytical only: a device spec file, resolved like checkpoint
  std::string hardware_dir;  // analytical without "device": where the shipped specs are
  std::string params;        // learned online only: hyper-parameters file
  std::uint64_t seed = 1;    // learned online only: initial weights
};

// `resolve` turns a path written in the campaign into a usable one. Throws InputError naming the
// JSON path of an unknown key, a wrong type, or an unknown model.
ModelSpec parse_model_spec(const JsonView& view, const std::function<std::string(const std::string&)>& resolve);

// Null for "none". `source_device` (a record's device, "tpu", "cpu:...") picks the analytical
// model's spec when the campaign names none. Throws InputError for a model not available in this
// build or a spec that cannot be read.
std::unique_ptr<CostModel> make_model(const ModelSpec& spec, const std::string& source_device = "");

}  // namespace perftune
