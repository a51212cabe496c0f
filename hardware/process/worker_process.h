#pragma once
// A long-lived child process that answers one line per request line (a worker), with failure
// isolation: it is a ChildProcess (its own process group, dies with perftune however perftune
// dies), and a request it does not answer in time, or answers by dying, kills it; the next
// request starts a new one. The Halide backend keeps one, so the compiler's and the kernels'
// crashes, hangs and memory stay out of the tuner, and libHalide and its JIT are loaded once,
// not per measurement.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hardware/process/subprocess.h"

namespace perftune {

struct WorkerReply {
  std::optional<std::string> line;  // the answer, without its newline; empty on failure
  bool timed_out = false;
  std::string failure;  // "exit code 3", "killed by signal 11 (Segmentation fault)", ... + stderr tail
  double wall_seconds = 0.0;
};

class WorkerProcess {
 public:
  // `argv[0]` is a path; `environment` entries ("NAME=value") are set on top of perftune's.
  explicit WorkerProcess(std::vector<std::string> argv, std::vector<std::string> environment = {});
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `line` (a newline is appended) and waits up to `timeout_seconds` (> 0) for one line
  // back, at most `max_reply_bytes` long. Starts the worker first if none runs; throws
  // std::runtime_error only when it cannot be started at all. The worker is started from the
  // calling thread, and Linux's parent-death signal follows that thread: call from a thread that
  // lives as long as the backend (the watchdog still kills the worker when perftune ends).
  WorkerReply request(const std::string& line, double timeout_seconds, std::size_t max_reply_bytes = 1 << 24);
  // Starts the worker if none runs (request() does it too); see request() on threads.
  void start();
  // Kills the worker (and its process group); the next request starts a new one.
  void stop();
  bool running() const { return child_.has_value(); }
  std::size_t starts() const { return starts_; }

 private:
  void drain_stderr();

  std::vector<std::string> argv_, environment_;
  std::optional<ChildProcess> child_;
  std::string pending_out_, err_tail_;
  std::size_t starts_ = 0;
};

// Runs work(worker, index of the worker, item) for items 0..count-1 striped over `workers` (item
// i on worker i % workers.size()), one thread per worker, and returns the items it did not run, in
// order: those that came after their worker died (a crash or a timeout stops it). The workers are
// started from the calling thread and never restarted by the batch's threads, since a worker's
// parent-death signal follows the thread that started it: one restarted there would be killed
// when the batch ends. Run the items returned from the calling thread.
std::vector<std::size_t> run_striped(std::span<const std::unique_ptr<WorkerProcess>> workers, std::size_t count,
                                     const std::function<void(WorkerProcess&, std::size_t worker, std::size_t item)>& work);

}  // namespace perftune
