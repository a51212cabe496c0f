#pragma once
// Runs a child process with failure isolation: its stdin is fed from a string, its stdout and
// stderr are captured, and it is killed (with its process group) when it overruns a timeout.
// The backends use it for the compiler, the CPU runner and a user's runner command, so that a
// crash or a hang of any of them comes back as data instead of taking the tuner down.
#include <optional>
#include <string>
#include <vector>

namespace perftune {

struct SubprocessResult {
  int exit_code = -1;        // valid when exited normally
  int signal = 0;            // the signal that killed it, 0 if it exited
  bool timed_out = false;    // killed by us after the timeout
  std::string out;           // captured stdout
  std::string err;           // captured stderr (the last kMaxCapturedStderr bytes)
  double wall_seconds = 0.0;

  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
  // "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 2 s".
  std::string describe() const;
};

// Runs argv[0] (searched in PATH) with `input` on stdin. Throws std::runtime_error only if the
// process cannot be started at all (e.g. no such program). `timeout_seconds` <= 0 means none.
SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::string& input,
                                double timeout_seconds);

// The last `max_lines` non-empty lines of `text`, joined by " | " (for one-line error messages).
std::string tail_lines(const std::string& text, std::size_t max_lines);

}  // namespace perftune
