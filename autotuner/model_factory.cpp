#include "autotuner/model_factory.h"

#include "ir/input_error.h"

namespace perftune {

ModelSpec parse_model_spec(const JsonView& view, const std::function<std::string(const std::string&)>& resolve) {
  ModelSpec spec;
  spec.file = view.file();
  spec.path = view.path();
  spec.type = view.at("type").as_string();
  if (spec.type == "none" || spec.type == "analytical") {
    view.expect_keys({"type"});
  } else if (spec.type == "learned") {
    view.expect_keys({"type", "checkpoint"});
    spec.checkpoint = resolve(view.at("checkpoint").as_string());
  } else {
    view.at("type").fail("one of \"none\", \"analytical\", \"learned\", found \"" + spec.type + "\"");
  }
  return spec;
}

std::unique_ptr<CostModel> make_model(const ModelSpec& spec) {
  if (spec.type == "none") return nullptr;
  throw InputError(spec.file, spec.path + ".type",
                   "a model this build provides (only \"none\"): \"" + spec.type + "\" is not available in this build");
}

}  // namespace perftune
