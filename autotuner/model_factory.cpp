#include "autotuner/model_factory.h"

#include "ir/device_spec.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "surrogate/analytical_model.h"
#include "surrogate/learned_model.h"
#include "surrogate/target_residual.h"

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
    std::unique_ptr<CostModel> learned;
    if (!spec.checkpoint.empty()) {
      if (!path_exists(spec.checkpoint))
        throw InputError(spec.file, spec.path + ".checkpoint",
                         "a checkpoint written by perftune train, but " + spec.checkpoint + " does not exist");
      learned = load_learned_model(spec.checkpoint);
    } else {
      learned = make_online_learned_model(spec.params, spec.seed);
    }
    if (!spec.residual) return learned;
    TargetResidualOptions options;
    options.fine_tune_prior = spec.residual_fine_tune_prior;
    options.exploration = spec.residual_exploration;
    return std::make_unique<TargetResidualModel>(std::move(learned), options);
  }
  throw InputError(spec.file, spec.path + ".type", "one of \"none\", \"analytical\", \"learned\"");
}

}  // namespace perftune
