#include "autotuner/factories/backend_factory.h"

#include "hardware/halide/halide_backend_json.h"
#include "hardware/process/subprocess.h"
#include "ir/input_error.h"

namespace perftune {

namespace {

// A timeout bounds a child that may hang forever: 0 must not quietly mean "no limit".
double timeout_seconds(const JsonView& value) {
  const double seconds = value.as_number();
  if (auto problem = timeout_problem(seconds)) value.fail("a timeout in seconds, but " + *problem);
  return seconds;
}

}  // namespace

const SettingsTable<FaultPlan>& fault_settings() {
  using O = FaultPlan;
  const auto bounded_seconds = [](double O::*member) {
    return [member](const JsonView& v, O& o) {
      o.*member = v.as_non_negative_number();
      if (o.*member > kMaxHangSeconds) v.fail("at most " + std::to_string(kMaxHangSeconds) + " seconds");
    };
  };
  static const auto table =
      SettingsTable<O>()
          .custom("share", "[0, 1], required", "none", "share of measurements (attempts) that get a fault",
                  [](const JsonView& v, O& o) {
                    o.share = v.as_non_negative_number();
                    if (o.share > 1) v.fail("a share in [0, 1]");
                  })
          .custom("kinds", "list of fault kinds", "all of them", "drawn uniformly per faulted measurement",
                  [](const JsonView& v, O& o) {
                    for (const JsonView& element : v.elements()) {
                      const std::string name = element.as_string();
                      const auto kind = parse_fault_kind(name);
                      if (!kind) {
                        std::string known;
                        for (FaultKind k : all_fault_kinds()) known += (known.empty() ? "\"" : ", \"") + std::string(fault_kind_name(k)) + "\"";
                        element.fail("one of " + known + ", found \"" + name + "\"");
                      }
                      o.kinds.push_back(*kind);
                    }
                    if (o.kinds.empty()) v.fail("at least one fault kind (or leave \"kinds\" out for all)");
                  })
          .custom("seed", "integer >= 0", "0", "the faults' draws", [](const JsonView& v, O& o) { o.seed = v.as_count(); })
          .custom("hang_seconds", "[0, 60]", setting_number_text(O{}.hang_seconds), "wall time a hang holds the call, also charged",
                  bounded_seconds(&O::hang_seconds))
          .custom("latency_seconds", "[0, 60]", setting_number_text(O{}.latency_seconds), "extra wall time per measured config",
                  bounded_seconds(&O::latency_seconds))
          .check([](const JsonView& object, const O&) { (void)object.at("share"); });  // required: a plan without it means nothing
  return table;
}

const SettingsTable<ReplayCost>& replay_cost_settings() {
  static const auto table =
      SettingsTable<ReplayCost>()
          .non_negative("per_measurement_seconds", &ReplayCost::per_measurement_seconds, "hardware seconds charged per measured config")
          .non_negative("runtime_multiple", &ReplayCost::runtime_multiple, "plus this many times the config's recorded runtime");
  return table;
}

const SettingsTable<CommandBackendOptions>& command_backend_settings() {
  using O = CommandBackendOptions;
  static const auto table =
      SettingsTable<O>()
          .custom("commands", "list of shell command lines, required", "none", "one runner per command (hardware/README.md: the protocol)",
                  [](const JsonView& v, O& o) {
                    o.commands = v.as_string_list();
                    if (o.commands.empty()) v.fail("at least one runner command");
                  })
          .custom("device", "string", "\"" + O{}.device + "\"", "names the device in the records' fingerprint",
                  [](const JsonView& v, O& o) { o.device = v.as_string(); })
          .custom("timeout_seconds", "> 0", setting_number_text(O{}.timeout_seconds), "per runner call (its whole share of a batch)",
                  [](const JsonView& v, O& o) { o.timeout_seconds = timeout_seconds(v); })
          .check([](const JsonView& object, const O&) { (void)object.at("commands"); });
  return table;
}

BackendSpec parse_backend_spec(const JsonView& view) {
  BackendSpec spec;
  spec.file = view.file();
  spec.path = view.path();
  spec.type = view.at("type").as_string();
  if (const auto faults = view.find("faults")) {
    spec.faults.emplace();
    fault_settings().read(*faults, *spec.faults);
  }
  if (spec.type == "replay") {
    view.expect_keys({"type", "cost", "faults"});
    if (const auto cost = view.find("cost")) replay_cost_settings().read(*cost, spec.replay_cost);
  } else if (spec.type == "cpu") {
    halide_backend_settings().read(view, spec.cpu, {"type", "faults"});
  } else if (spec.type == "command") {
    command_backend_settings().read(view, spec.command, {"type", "faults"});
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
