#include "autotuner/model_factory.h"

#include "ir/device_spec.h"
#include "ir/input_error.h"
#include "surrogate/analytical_model.h"

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
    view.expect_keys({"type", "checkpoint"});
    spec.checkpoint = resolve(view.at("checkpoint").as_string());
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
  throw InputError(spec.file, spec.path + ".type",
                   "a model this build provides (\"none\" or \"analytical\"): \"" + spec.type + "\" is not available in this build");
}

}  // namespace perftune
