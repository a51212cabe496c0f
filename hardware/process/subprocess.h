#pragma once
// Child processes that never outlive perftune, and a bounded run of one child.
//
// Every child perftune starts (a user's runner, the Halide backend's persistent worker, the test
// fixtures' children) goes through ChildProcess::start. The child leads its own process group, so one
// kill_group() reaches whatever it started (a shell's `sleep`, a runner's own workers), and it
// dies with perftune however perftune dies, SIGKILL included:
//   - the child itself gets PR_SET_PDEATHSIG(SIGKILL), re-checked with getppid() before exec so a
//     parent that died during the fork is noticed;
//   - what the child starts does not inherit that signal, so a watchdog process (forked once per
//     perftune process) holds the read end of a pipe only perftune writes to, and a list of the
//     live groups; at end-of-file (perftune gone) it SIGKILLs every group on the list and exits.
// Caveat (Linux): the parent-death signal fires when the *thread* that started the child ends,
// not only the process. Start a long-lived child from a thread that lives as long as it should
// (the watchdog does not have this caveat: it watches the process).
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace perftune {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with pipes on its stdin, stdout and stderr (the parent's
  // ends are non-blocking and close-on-exec). Throws std::runtime_error if it cannot be started.
  // From the first call on, perftune ignores SIGPIPE: writing to a child that is gone gives EPIPE.
  // `environment` entries ("NAME=value") are set in the child on top of perftune's environment.
  static ChildProcess start(const std::vector<std::string>& argv, const std::vector<std::string>& environment = {});

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills the group and reaps the child if that has not happened yet.
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int stdin_fd() const { return stdin_; }   // -1 once closed
  int stdout_fd() const { return stdout_; }
  int stderr_fd() const { return stderr_; }
  void close_stdin();
  void close_stdout();
  void close_stderr();

  // Whether the child (the group's leader) has exited; it is not reaped yet, so its group id
  // cannot be reused and kill_group() stays safe.
  bool has_exited() const;
  // SIGKILL to the child and everything in its group. Idempotent.
  void kill_group();
  // Kills what is left of the group, reaps the child and returns its wait status (waitpid's).
  int reap();

 private:
  ChildProcess() = default;
  void release();

  pid_t pid_ = -1;
  int stdin_ = -1, stdout_ = -1, stderr_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

struct SubprocessResult {
  int exit_code = -1;            // valid when exited normally
  int signal = 0;                // the signal that killed it, 0 if it exited
  bool timed_out = false;        // killed by us after the timeout
  bool stdout_overflow = false;  // killed by us for printing more than the stdout limit
  std::size_t stdout_limit = 0;  // that limit, for messages
  std::string out;               // captured stdout (at most the limit)
  std::string err;               // captured stderr (the last kMaxCapturedStderr bytes)
  double wall_seconds = 0.0;

  bool ok() const { return !timed_out && !stdout_overflow && signal == 0 && exit_code == 0; }
  // "exit code 3", "killed by signal 11 (Segmentation fault)", "timed out after 2 s",
  // "printed more than 16777216 bytes on stdout".
  std::string describe() const;
};

// What run_subprocess keeps of stdout unless told otherwise: far above any compiler's or runner's
// legitimate output, far below what would hurt the machine.
inline constexpr std::size_t kDefaultMaxStdoutBytes = std::size_t{16} << 20;

// Runs argv (a ChildProcess) with `input` on stdin, and returns as soon as the child exits,
// overruns `timeout_seconds` (finite and > 0, else std::invalid_argument) or prints more than
// `max_stdout_bytes`; whatever the child started is killed then too, so a background process
// that still holds stdout does not turn a finished answer into a timeout. Throws
// std::runtime_error only if the process cannot be started at all (e.g. no such program).
SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::string& input, double timeout_seconds,
                                std::size_t max_stdout_bytes = kDefaultMaxStdoutBytes);

// Empty when `seconds` can bound a child's run (finite, > 0); else what is wrong, for messages.
std::optional<std::string> timeout_problem(double seconds);

// The last `max_lines` non-empty lines of `text`, joined by " | " (for one-line error messages).
std::string tail_lines(const std::string& text, std::size_t max_lines);

}  // namespace perftune
