#include "hardware/process/runner_protocol.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/program_json.h"

namespace perftune {

std::size_t runner_reply_limit(std::size_t configs) { return std::max(kMinRunnerReplyBytes, kRunnerReplyBytesPerConfig * configs); }

std::string runner_request(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  nlohmann::ordered_json request;
  request["protocol"] = "perftune-runner";
  request["version"] = kRunnerProtocolVersion;
  request["kernel"] = {{"key", kernel.key()}, {"name", kernel.name()}, {"program", program_to_json(kernel.body())}};
  nlohmann::ordered_json knobs = nlohmann::ordered_json::array();
  for (const Knob& knob : space.knobs()) knobs.push_back({{"name", knob.name}, {"values", knob.values}});
  request["knobs"] = std::move(knobs);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Config& config : configs) list.push_back(space.to_json(config));
  request["configs"] = std::move(list);
  return request.dump() + "\n";
}

namespace {

// One result of a reply; throws InputError naming its JSON path when it is not a valid result.
MeasureResult parse_runner_result(const JsonView& r) {
  r.expect_keys({"status", "seconds", "spread", "repeats", "cost", "message"});
  const auto status = parse_status(r.at("status").as_string());
  if (!status) r.at("status").fail("a status: ok, compile_error, runtime_error, timeout, wrong_result, invalid_config or not_recorded");
  double cost = 0.0;
  if (r.has("cost")) {
    cost = r.at("cost").as_number();
    if (auto problem = cost_problem(cost)) r.at("cost").fail("a hardware cost in seconds, but " + *problem);
  }
  const std::string message = r.get_string("message", "");
  if (*status != MeasureStatus::kOk) return MeasureResult::failure(*status, message, cost);
  const auto runtime = [](const JsonView& value) {
    const double seconds = value.as_number();
    if (auto problem = runtime_problem(seconds)) value.fail("a valid runtime in seconds, but " + *problem);
    return seconds;
  };
  std::vector<double> repeats;
  if (auto list = r.find("repeats"))
    for (const JsonView& x : list->elements()) repeats.push_back(runtime(x));
  if (repeats.empty()) repeats.push_back(runtime(r.at("seconds")));
  MeasureResult result = MeasureResult::from_repeats(repeats, cost);
  // The runner's own median and spread win when given (it may have more samples than it sends).
  if (r.has("seconds")) result.seconds = runtime(r.at("seconds"));
  if (r.has("spread")) {
    result.spread = r.at("spread").as_non_negative_number();
    if (auto problem = spread_problem(result.spread)) r.at("spread").fail("a valid spread, but " + *problem);
  }
  result.message = message;
  return result;
}

}  // namespace

std::vector<MeasureResult> parse_runner_response(const std::string& text, std::size_t expected, const std::string& source,
                                                 double cost_of_bad_result) {
  const nlohmann::json json = parse_json_text(text, source);
  const JsonView root(json, source);
  root.expect_keys({"results"});
  const JsonView results = root.at("results");
  if (results.size() != expected) results.fail(std::to_string(expected) + " results, one per config (got " + std::to_string(results.size()) + ")");
  std::vector<MeasureResult> out;
  // Judged one by one: a bad value fails its own result, not the valid ones beside it.
  for (const JsonView& r : results.elements()) {
    try {
      out.push_back(parse_runner_result(r));
    } catch (const InputError& error) {
      out.push_back(MeasureResult::failure(MeasureStatus::kRuntimeError, error.what(), cost_of_bad_result));
    }
  }
  return out;
}

RunnerRequest parse_runner_request(const std::string& text, const std::string& source) {
  const nlohmann::json json = parse_json_text(text, source);
  const JsonView root(json, source);
  root.expect_keys({"protocol", "version", "kernel", "knobs", "configs"});
  if (root.at("protocol").as_string() != "perftune-runner") root.at("protocol").fail("\"perftune-runner\"");
  if (root.at("version").as_int() != kRunnerProtocolVersion) root.at("version").fail("version " + std::to_string(kRunnerProtocolVersion));
  const JsonView kernel = root.at("kernel");
  kernel.expect_keys({"key", "name", "program"});
  // A kernel known from a recording alone has no graph: it travels as its name and key.
  const nlohmann::json& program = kernel.at("program").value();
  const bool opaque = program.is_object() && program.contains("ops") && program["ops"].is_array() && program["ops"].empty();
  Kernel rebuilt = opaque ? Kernel::opaque(kernel.at("name").as_string(), kernel.at("key").as_string())
                          : Kernel(kernel.at("name").as_string(), program_from_json(kernel.at("program")));
  if (rebuilt.key() != kernel.at("key").as_string()) kernel.at("key").fail("the key of the program sent (" + rebuilt.key() + ")");
  std::vector<Knob> knobs;
  for (const JsonView& knob : root.at("knobs").elements()) {
    knob.expect_keys({"name", "values"});
    Knob k{knob.at("name").as_string(), {}};
    for (const JsonView& value : knob.at("values").elements()) k.values.push_back(value.as_int());
    knobs.push_back(std::move(k));
  }
  RunnerRequest request{std::move(rebuilt), SearchSpace(std::move(knobs)), {}};
  const JsonView configs = root.at("configs");
  for (std::size_t i = 0; i < configs.size(); ++i) {
    try {
      request.configs.push_back(request.space.from_json(configs.at(i).value()));
    } catch (const std::invalid_argument& error) {
      configs.at(i).fail(std::string("a config of the knobs sent: ") + error.what());
    }
  }
  return request;
}

std::string runner_response(std::span<const MeasureResult> results) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const MeasureResult& r : results) {
    nlohmann::ordered_json j;
    j["status"] = std::string(status_name(r.status));
    if (r.ok()) {
      j["seconds"] = r.seconds;
      j["spread"] = r.spread;
      j["repeats"] = r.repeats;
    }
    j["cost"] = r.cost_seconds;
    j["message"] = r.message;
    list.push_back(std::move(j));
  }
  return nlohmann::ordered_json{{"results", std::move(list)}}.dump() + "\n";
}

}  // namespace perftune
