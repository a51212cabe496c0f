#include "autotuner/model_factory.h"

#include <filesystem>

#include "ir/device_spec.h"
#include "ir/input_error.h"
#include "surrogate/analytical_model.h"
#include "surrogate/learned_model.h"

namespace perftune {

ModelSpec parse_model_spec(const JsonView& view, const std::function<std::string(const std::string&)>& resolve) {
  ModelSpec spec;
  spec.file = view.file();
  spec.path = view.path();
  spec.type = view.at("type").as_string();
  if (spec.type == "none") {
    view.expect_keys({"type"});
  } else if (spec.type == "analytical") {
    view.expect_keys({"type", "device"});
    if (view.has("device")) spec.device = resolve(view.at("device").as_string());
    spec.hardware_dir = resolve("../hardware");
  } else if (spec.type == "learned") {
    view.expect_keys({"type", "checkpoint", "params", "seed"});
    if (view.has("checkpoint") == view.has("params"))
      view.fail("either \"checkpoint\" (a model trained by perftune train) or \"params\" (hyper-parameters "
                "of a model trained online from scratch), not both");
    if (const auto checkpoint = view.find("checkpoint")) spec.checkpoint = resolve(checkpoint->as_string());
    if (const auto params = view.find("params")) spec.params = resolve(params->as_string());
    if (const auto seed = view.find("seed")) spec.seed = static_cast<std::uint64_t>(seed->as_int());
  } else {
    view.at("type").fail("one of \"none\", \"analytical\", \"learned\", found \"" + spec.type + "\"");
  }
  return spec;
}

std::unique_ptr<CostModel> make_model(const ModelSpec& spec, const std::string& source_device) {
  if (spec.type == "none") return nullptr;
  if (spec.type == "analytical") {
    std::string device = spec.device;
    if (device.empty()) {
      try {
        device = device_spec_path(source_device, spec.hardware_dir);
      } catch (const std::invalid_argument& error) {
        throw InputError(spec.file, spec.path, std::string("a \"device\" spec file: ") + error.what());
      }
    }
    return std::make_unique<AnalyticalModel>(load_device_spec(device));
  }
  if (spec.type == "learned") {
    if (!spec.checkpoint.empty()) {
      if (!std::filesystem::exists(spec.checkpoint))
        throw InputError(spec.file, spec.path + ".checkpoint",
                         "a checkpoint written by perftune train, but " + spec.checkpoint + " does not exist");
      return load_learned_model(spec.checkpoint);
    }
    return make_online_learned_model(spec.params, spec.seed);
  }
  throw InputError(spec.file, spec.path + ".type", "one of \"none\", \"analytical\", \"learned\"");
}

}  // namespace perftune
