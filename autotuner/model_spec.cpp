#include "autotuner/model_spec.h"

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
    view.expect_keys({"type", "checkpoint", "params", "seed", "residual"});
    if (view.has("checkpoint") == view.has("params"))
      view.fail("either \"checkpoint\" (a model trained by perftune train) or \"params\" (hyper-parameters "
                "of a model trained online from scratch), not both");
    if (const auto checkpoint = view.find("checkpoint")) spec.checkpoint = resolve(checkpoint->as_string());
    if (const auto params = view.find("params")) spec.params = resolve(params->as_string());
    if (const auto seed = view.find("seed")) spec.seed = static_cast<std::uint64_t>(seed->as_int());
    if (const auto residual = view.find("residual")) {
      if (!residual->is_object()) residual->fail("an object, e.g. {\"fine_tune_prior\": false}");
      residual->expect_keys({"fine_tune_prior", "exploration"});
      spec.residual = true;
      if (const auto fine_tune = residual->find("fine_tune_prior")) spec.residual_fine_tune_prior = fine_tune->as_bool();
      if (const auto exploration = residual->find("exploration"))
        spec.residual_exploration = exploration->as_non_negative_number();
    }
  } else {
    view.at("type").fail("one of \"none\", \"analytical\", \"learned\", found \"" + spec.type + "\"");
  }
  return spec;
}

}  // namespace perftune
