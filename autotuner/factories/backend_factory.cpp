#include "autotuner/factories/backend_factory.h"

#include "hardware/halide_backend_json.h"
#include "hardware/process/subprocess.h"
#include "ir/input_error.h"

namespace perftune {

namespace {

FaultPlan parse_fault_plan(const JsonView& view) {
  view.expect_keys({"share", "kinds", "seed", "hang_seconds", "latency_seconds"});
  FaultPlan plan;
  const JsonView share = view.at("share");
  plan.share = share.as_non_negative_number();
  if (plan.share > 1) share.fail("a share in [0, 1]");
  if (const auto kinds = view.find("kinds")) {
    for (const JsonView& element : kinds->elements()) {
      const std::string name = element.as_string();
      const auto kind = parse_fault_kind(name);
      if (!kind) {
        std::string known;
        for (FaultKind k : all_fault_kinds()) known += (known.empty() ? "\"" : ", \"") + std::string(fault_kind_name(k)) + "\"";
        element.fail("one of " + known + ", found \"" + name + "\"");
      }
      plan.kinds.push_back(*kind);
    }
    if (plan.kinds.empty()) kinds->fail("at least one fault kind (or leave \"kinds\" out for all)");
  }
  if (const auto v = view.find("seed")) plan.seed = v->as_count();
  for (const auto& [key, field] : {std::pair{"hang_seconds", &plan.hang_seconds}, std::pair{"latency_seconds", &plan.latency_seconds}})
    if (const auto v = view.find(key)) {
      *field = v->as_non_negative_number();
      if (*field > kMaxHangSeconds) v->fail("at most " + std::to_string(kMaxHangSeconds) + " seconds");
    }
  return plan;
}

}  // namespace

BackendSpec parse_backend_spec(const JsonView& view) {
  // A timeout bounds a child that may hang forever: 0 must not quietly mean "no limit".
  const auto timeout_seconds = [](const JsonView& value) {
    const double seconds = value.as_number();
    if (auto problem = timeout_problem(seconds)) value.fail("a timeout in seconds, but " + *problem);
    return seconds;
  };
  BackendSpec spec;
  spec.file = view.file();
  spec.path = view.path();
  spec.type = view.at("type").as_string();
  if (const auto faults = view.find("faults")) spec.faults = parse_fault_plan(*faults);
  if (spec.type == "replay") {
    view.expect_keys({"type", "cost", "faults"});
    if (const auto cost = view.find("cost")) {
      cost->expect_keys({"per_measurement_seconds", "runtime_multiple"});
      if (const auto v = cost->find("per_measurement_seconds")) spec.replay_cost.per_measurement_seconds = v->as_non_negative_number();
      if (const auto v = cost->find("runtime_multiple")) spec.replay_cost.runtime_multiple = v->as_non_negative_number();
    }
  } else if (spec.type == "cpu") {
    std::vector<std::string> keys = halide_backend_option_keys();
    keys.insert(keys.end(), {"type", "faults"});
    view.expect_keys(keys);
    read_halide_backend_options(view, spec.cpu);
  } else if (spec.type == "command") {
    view.expect_keys({"type", "faults", "commands", "device", "timeout_seconds"});
    spec.command.commands = view.at("commands").as_string_list();
    if (spec.command.commands.empty()) view.at("commands").fail("at least one runner command");
    spec.command.device = view.get_string("device", spec.command.device);
    if (const auto v = view.find("timeout_seconds")) spec.command.timeout_seconds = timeout_seconds(*v);
  } else {
    view.at("type").fail("one of \"replay\", \"cpu\", \"command\", found \"" + spec.type + "\"");
  }
  return spec;
}

BackendTraits backend_traits(const BackendSpec& spec) {
  BackendTraits traits;
  traits.recorded = spec.type == "replay";
  traits.repeatable = traits.recorded && !spec.faults;
  return traits;
}

std::unique_ptr<Backend> make_backend(const BackendSpec& spec, const Corpus& recorded, const std::string& device,
                                      const BackendWrapper& wrap_device) {
  std::unique_ptr<Backend> backend;
  if (spec.type == "replay") backend = std::make_unique<ReplayBackend>(recorded, device, spec.replay_cost);
  else if (spec.type == "cpu") backend = std::make_unique<HalideBackend>(spec.cpu);
  else backend = std::make_unique<CommandBackend>(spec.command);
  if (wrap_device) backend = wrap_device(std::move(backend));
  if (!spec.faults) return backend;
  return std::make_unique<FaultInjectingBackend>(std::move(backend), *spec.faults);
}

}  // namespace perftune
