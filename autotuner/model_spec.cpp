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

}  // namespace perftune
