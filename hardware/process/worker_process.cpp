#include "hardware/process/worker_process.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace perftune {

namespace {

// The last bytes of a worker's stderr kept for messages.
constexpr std::size_t kMaxStderrTail = 64 * 1024;

using Clock = std::chrono::steady_clock;

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "ended";
}

double seconds_since(Clock::time_point begin) { return std::chrono::duration<double>(Clock::now() - begin).count(); }

}  // namespace

WorkerProcess::WorkerProcess(std::vector<std::string> argv, std::vector<std::string> environment)
    : argv_(std::move(argv)), environment_(std::move(environment)) {}

WorkerProcess::~WorkerProcess() { stop(); }

void WorkerProcess::stop() { child_.reset(); }  // ~ChildProcess kills the group and reaps

void WorkerProcess::drain_stderr() {
  if (!child_ || child_->stderr_fd() < 0) return;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(child_->stderr_fd(), buffer, sizeof buffer);
    if (n <= 0) break;
    err_tail_.append(buffer, static_cast<std::size_t>(n));
    if (err_tail_.size() > kMaxStderrTail) err_tail_.erase(0, err_tail_.size() - kMaxStderrTail);
  }
}

void WorkerProcess::start() {
  if (child_) return;
  child_.emplace(ChildProcess::start(argv_, environment_));
  pending_out_.clear();
  err_tail_.clear();
  ++starts_;
}

WorkerReply WorkerProcess::request(const std::string& line, double timeout_seconds, std::size_t max_reply_bytes) {
  start();
  ChildProcess& child = *child_;
  const auto begin = Clock::now();
  WorkerReply reply;
  const auto fail = [&](std::string why) {
    drain_stderr();
    // A worker that closed its output is ending: give it a moment to say why (its exit status).
    for (int tries = 0; !reply.timed_out && tries < 40; ++tries) {
      if (child.has_exited()) {
        why = describe_status(child.reap());
        break;
      }
      ::usleep(5000);
    }
    const std::string tail = tail_lines(err_tail_, 3);
    stop();
    reply.failure = why + (tail.empty() ? "" : ": " + tail);
    reply.wall_seconds = seconds_since(begin);
    return reply;
  };
  const auto time_left_ms = [&] { return static_cast<int>((timeout_seconds - seconds_since(begin)) * 1000) + 1; };
  // Write the request; the pipe is non-blocking, so a long request waits for room.
  const std::string message = line + "\n";
  std::size_t written = 0;
  while (written < message.size()) {
    const ssize_t n = ::write(child.stdin_fd(), message.data() + written, message.size() - written);
    if (n >= 0) {
      written += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return fail("the worker stopped reading its requests");
    if (seconds_since(begin) >= timeout_seconds) {
      reply.timed_out = true;
      return fail("timed out after " + std::to_string(timeout_seconds) + " s");
    }
    pollfd out = {child.stdin_fd(), POLLOUT, 0};
    ::poll(&out, 1, time_left_ms());
  }
  for (;;) {
    if (const auto newline = pending_out_.find('\n'); newline != std::string::npos) {
      reply.line = pending_out_.substr(0, newline);
      pending_out_.erase(0, newline + 1);
      drain_stderr();
      reply.wall_seconds = seconds_since(begin);
      return reply;
    }
    if (pending_out_.size() > max_reply_bytes) return fail("the worker's reply exceeded " + std::to_string(max_reply_bytes) + " bytes");
    if (seconds_since(begin) >= timeout_seconds) {
      reply.timed_out = true;
      return fail("timed out after " + std::to_string(timeout_seconds) + " s");
    }
    pollfd fds[2] = {{child.stdout_fd(), POLLIN, 0}, {child.stderr_fd(), POLLIN, 0}};
    const int ready = ::poll(fds, 2, time_left_ms());
    if (ready < 0 && errno != EINTR) return fail(std::string("poll failed: ") + std::strerror(errno));
    if (fds[1].revents) drain_stderr();
    if (fds[0].revents) {
      char buffer[65536];
      const ssize_t n = ::read(child.stdout_fd(), buffer, sizeof buffer);
      if (n == 0) return fail("the worker ended without answering");
      if (n > 0) pending_out_.append(buffer, static_cast<std::size_t>(n));
    }
  }
}

std::vector<std::size_t> run_striped(std::span<const std::unique_ptr<WorkerProcess>> workers, std::size_t count,
                                     const std::function<void(WorkerProcess&, std::size_t worker, std::size_t item)>& work) {
  if (workers.empty()) throw std::invalid_argument("run_striped: no workers");
  for (const auto& worker : workers) worker->start();
  std::vector<std::vector<std::size_t>> skipped(workers.size());
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers.size(); ++w)
    threads.emplace_back([&, w] {
      WorkerProcess& worker = *workers[w];
      for (std::size_t item = w; item < count; item += workers.size()) {
        if (worker.running())
          work(worker, w, item);
        else
          skipped[w].push_back(item);
      }
    });
  for (std::thread& thread : threads) thread.join();
  std::vector<std::size_t> not_run;
  for (const auto& items : skipped) not_run.insert(not_run.end(), items.begin(), items.end());
  std::sort(not_run.begin(), not_run.end());
  return not_run;
}

}  // namespace perftune
