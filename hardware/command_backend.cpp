#include "hardware/command_backend.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "hardware/subprocess.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/program_json.h"

namespace perftune {

CommandBackend::CommandBackend(CommandBackendOptions options) : options_(std::move(options)) {
  if (options_.commands.empty()) throw std::invalid_argument("a command backend needs at least one runner command");
  if (auto problem = timeout_problem(options_.timeout_seconds)) throw std::invalid_argument("a command backend's timeout: " + *problem);
}

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
  if (r.has("spread")) result.spread = r.at("spread").as_non_negative_number();
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

std::vector<MeasureResult> CommandBackend::measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  std::vector<MeasureResult> results(configs.size());
  const std::size_t runners = std::min(options_.commands.size(), configs.size());
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < runners; ++k) {
    // Contiguous shares, sizes differing by at most one.
    const std::size_t begin = configs.size() * k / runners, end = configs.size() * (k + 1) / runners;
    threads.emplace_back([&, k, begin, end] {
      const std::string& command = options_.commands[k];
      const std::string source = "runner " + std::to_string(k) + " (" + command + ")";
      const auto share = configs.subspan(begin, end - begin);
      const auto fail_all = [&](MeasureStatus status, const std::string& message, double cost) {
        for (std::size_t i = begin; i < end; ++i)
          results[i] = MeasureResult::failure(status, message, cost / static_cast<double>(end - begin));
      };
      SubprocessResult run;
      try {
        run = run_subprocess({"/bin/sh", "-c", command}, runner_request(kernel, space, share), options_.timeout_seconds,
                             runner_reply_limit(share.size()));
      } catch (const std::exception& error) {  // a command that cannot start
        return fail_all(MeasureStatus::kRuntimeError, error.what(), 0.0);
      }
      if (run.timed_out) return fail_all(MeasureStatus::kTimeout, source + " timed out after " + std::to_string(options_.timeout_seconds) + " s", run.wall_seconds);
      if (!run.ok())
        return fail_all(MeasureStatus::kRuntimeError, source + " failed: " + run.describe() + (run.err.empty() ? "" : ": " + tail_lines(run.err, 3)), run.wall_seconds);
      try {
        auto parsed = parse_runner_response(run.out, share.size(), source + " stdout", run.wall_seconds / static_cast<double>(share.size()));
        for (std::size_t i = 0; i < parsed.size(); ++i) results[begin + i] = std::move(parsed[i]);
      } catch (const std::exception& error) {  // not a reply at all: the time it ran was spent all the same
        fail_all(MeasureStatus::kRuntimeError, error.what(), run.wall_seconds);
      }
    });
  }
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace perftune
