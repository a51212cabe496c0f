#include "hardware/command/command_backend.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "hardware/process/subprocess.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/program_json.h"

namespace perftune {

CommandBackend::CommandBackend(CommandBackendOptions options) : options_(std::move(options)) {
  if (options_.commands.empty()) throw std::invalid_argument("a command backend needs at least one runner command");
  if (auto problem = timeout_problem(options_.timeout_seconds)) throw std::invalid_argument("a command backend's timeout: " + *problem);
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
