#pragma once
// Measurements by a user's executable (e.g. a script on a TPU VM, or `ssh host runner`), spoken
// to over a JSON protocol on stdin/stdout (documented in hardware/README.md):
//   request  {"protocol": "perftune-runner", "version": 1,
//             "kernel": {"key": ..., "name": ..., "program": <program JSON>},
//             "knobs": [{"name": ..., "values": [...]}, ...], "configs": [{knob: value, ...}, ...]}
//   response {"results": [{"status": "ok", "seconds": 1.2e-5, "spread": 0.01, "repeats": [...],
//                          "cost": 0.8, "message": ""}, ...]}   one per config, in order
// A pool of runners (one command per device or host) measures a batch in parallel, each a
// contiguous share of it. A runner that exits early, prints garbage or overruns the timeout
// fails its share with a clear message; the tuner goes on.
#include <span>
#include <string>
#include <vector>

#include "hardware/backend.h"

namespace perftune {

inline constexpr int kRunnerProtocolVersion = 1;

struct CommandBackendOptions {
  std::vector<std::string> commands;  // shell command lines (run with /bin/sh -c), one per runner
  std::string device = "command";     // names the device in the fingerprint ("command:<device>")
  double timeout_seconds = 600;       // per runner call (its whole share of a batch)
};

class CommandBackend : public Backend {
 public:
  // Throws std::invalid_argument if there is no command.
  explicit CommandBackend(CommandBackendOptions options);

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  std::string fingerprint() const override { return "command:" + options_.device; }

 private:
  CommandBackendOptions options_;
};

// The request document for `configs` of `kernel` (exposed for runners' tests and docs).
std::string runner_request(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs);
// Parses a response with `expected` results. Throws InputError naming `source` and the JSON
// path (bad JSON, wrong count, unknown status, an ok result without a valid runtime).
std::vector<MeasureResult> parse_runner_response(const std::string& text, std::size_t expected, const std::string& source);

}  // namespace perftune
