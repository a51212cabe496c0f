#include "autotuner/backend_factory.h"

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
  if (const auto v = view.find("seed")) {
    const std::int64_t seed = v->as_int();
    if (seed < 0) v->fail("a non-negative integer");
    plan.seed = static_cast<std::uint64_t>(seed);
  }
  for (const auto& [key, field] : {std::pair{"hang_seconds", &plan.hang_seconds}, std::pair{"latency_seconds", &plan.latency_seconds}})
    if (const auto v = view.find(key)) {
      *field = v->as_non_negative_number();
      if (*field > kMaxHangSeconds) v->fail("at most " + std::to_string(kMaxHangSeconds) + " seconds");
    }
  return plan;
}

}  // namespace

BackendSpec parse_backend_spec(const JsonView& view) {
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
  } else if (spec.type != "cpu" && spec.type != "command") {
    view.at("type").fail("one of \"replay\", \"cpu\", \"command\", found \"" + spec.type + "\"");
  }
  return spec;
}

std::unique_ptr<Backend> make_backend(const BackendSpec& spec, const Corpus& recorded, const std::string& device) {
  if (spec.type == "replay") {
    auto replay = std::make_unique<ReplayBackend>(recorded, device, spec.replay_cost);
    if (!spec.faults) return replay;
    return std::make_unique<FaultInjectingBackend>(std::move(replay), *spec.faults);
  }
  throw InputError(spec.file, spec.path + ".type",
                   "a backend this build provides (only \"replay\"): \"" + spec.type + "\" is not available in this build");
}

}  // namespace perftune
