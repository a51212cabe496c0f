#include "autotuner/model_factory.h"

#include <filesystem>

#include "ir/device_spec.h"
#include "ir/input_error.h"
#include "surrogate/analytical_model.h"
#include "surrogate/learned_model.h"

namespace perftune {

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
