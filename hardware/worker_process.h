#pragma once
// A long-lived child process that answers one line per request line (a worker), with failure
// isolation: it runs in its own process group, dies with perftune (PR_SET_PDEATHSIG), and a
// request it does not answer in time, or answers by dying, kills it; the next request starts a
// new one. The Halide backend keeps one, so the compiler's and the kernels' crashes, hangs and
// memory stay out of the tuner, and libHalide and its JIT are loaded once, not per measurement.
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace perftune {

struct WorkerReply {
  std::optional<std::string> line;  // the answer, without its newline; empty on failure
  bool timed_out = false;
  std::string failure;  // "exit code 3", "killed by signal 11 (Segmentation fault)", ... + stderr tail
  double wall_seconds = 0.0;
};

class WorkerProcess {
 public:
  // `argv[0]` is a path; `environment` entries ("NAME=value") are added to this process's.
  explicit WorkerProcess(std::vector<std::string> argv, std::vector<std::string> environment = {});
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `line` (a newline is appended) and waits up to `timeout_seconds` (> 0) for one line
  // back, at most `max_reply_bytes` long. Starts the worker first if none runs; throws
  // std::runtime_error only when it cannot be started at all.
  WorkerReply request(const std::string& line, double timeout_seconds, std::size_t max_reply_bytes = 1 << 24);
  // Kills the worker (and its process group); the next request starts a new one.
  void stop();
  bool running() const { return pid_ > 0; }
  std::size_t starts() const { return starts_; }

 private:
  void start();
  void drain_stderr();

  std::vector<std::string> argv_, environment_;
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1, child_err_ = -1;
  std::string pending_out_, err_tail_;
  std::size_t starts_ = 0;
};

}  // namespace perftune
