#pragma once
// Measurements by a user's executable (e.g. a script on a TPU VM, or `ssh host runner`), spoken
// to over a JSON protocol on stdin/stdout (documented in hardware/README.md):
//   request  {"protocol": "perftune-runner", "version": 1,
//             "kernel": {"key": ..., "name": ..., "program": <program JSON>},
//             "knobs": [{"name": ..., "values": [...]}, ...], "configs": [{knob: value, ...}, ...]}
//   response {"results": [{"status": "ok", "seconds": 1.2e-5, "spread": 0.01, "repeats": [...],
//                          "cost": 0.8, "message": ""}, ...]}   one per config, in order
// A pool of runners (one command per device or host) measures a batch in parallel, each a
// contiguous share of it. A runner that exits early, prints garbage or too much, or overruns the
// timeout fails its share with a clear message, charged the time it ran; a reply is judged result
// by result, so one bad value fails only its own config. The tuner goes on. Runners and whatever
// they start die with perftune (hardware/process/subprocess.h). Hostile runners: docs/hardening.md.
#include <span>
#include <string>
#include <vector>

#include "hardware/backend.h"
#include "hardware/process/runner_protocol.h"

namespace perftune {

struct CommandBackendOptions {
  std::vector<std::string> commands;  // shell command lines (run with /bin/sh -c), one per runner
  std::string device = "command";     // names the device in the fingerprint ("command:<device>")
  double timeout_seconds = 600;       // per runner call (its whole share of a batch); finite, > 0
};

class CommandBackend : public Backend {
 public:
  // Throws std::invalid_argument if there is no command or the timeout is not finite and > 0.
  explicit CommandBackend(CommandBackendOptions options);

  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  std::string fingerprint() const override { return "command:" + options_.device; }

 private:
  CommandBackendOptions options_;
};

}  // namespace perftune
