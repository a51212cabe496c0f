#include "autotuner/backend_factory.h"

#include "ir/input_error.h"

namespace perftune {

BackendSpec parse_backend_spec(const JsonView& view) {
  BackendSpec spec;
  spec.file = view.file();
  spec.path = view.path();
  spec.type = view.at("type").as_string();
  if (spec.type == "replay") {
    view.expect_keys({"type", "cost"});
    if (const auto cost = view.find("cost")) {
      cost->expect_keys({"per_measurement_seconds", "runtime_multiple"});
      if (const auto v = cost->find("per_measurement_seconds")) spec.replay_cost.per_measurement_seconds = v->as_non_negative_number();
      if (const auto v = cost->find("runtime_multiple")) spec.replay_cost.runtime_multiple = v->as_non_negative_number();
    }
  } else if (spec.type != "cpu" && spec.type != "command") {
    view.at("type").fail("one of \"replay\", \"cpu\", \"command\", found \"" + spec.type + "\"");
  }
  return spec;
}

std::unique_ptr<Backend> make_backend(const BackendSpec& spec, const Corpus& recorded, const std::string& device) {
  if (spec.type == "replay") return std::make_unique<ReplayBackend>(recorded, device, spec.replay_cost);
  throw InputError(spec.file, spec.path + ".type",
                   "a backend this build provides (only \"replay\"): \"" + spec.type + "\" is not available in this build");
}

}  // namespace perftune
