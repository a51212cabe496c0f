#include "hardware/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "hardware/subprocess.h"

extern char** environ;

namespace perftune {

namespace {

// The last bytes of a worker's stderr kept for messages.
constexpr std::size_t kMaxStderrTail = 64 * 1024;

using Clock = std::chrono::steady_clock;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "ended";
}

}  // namespace

WorkerProcess::WorkerProcess(std::vector<std::string> argv, std::vector<std::string> environment)
    : argv_(std::move(argv)), environment_(std::move(environment)) {}

WorkerProcess::~WorkerProcess() { stop(); }

void WorkerProcess::start() {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create pipes for ") + argv_[0] + ": " + std::strerror(errno));
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (std::string& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), environment_.begin(), environment_.end());
  std::vector<char*> env;
  for (std::string& e : env_strings) env.push_back(e.data());
  env.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("cannot fork for ") + argv_[0] + ": " + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execve(args[0], args.data(), env.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent, so a kill right after fork finds the group
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  child_err_ = err[0];
  ::fcntl(child_err_, F_SETFL, ::fcntl(child_err_, F_GETFL) | O_NONBLOCK);
  pid_ = pid;
  pending_out_.clear();
  err_tail_.clear();
  ++starts_;
}

void WorkerProcess::stop() {
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  pid_ = -1;
  close_fd(to_child_);
  close_fd(from_child_);
  close_fd(child_err_);
}

void WorkerProcess::drain_stderr() {
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(child_err_, buffer, sizeof buffer);
    if (n <= 0) break;
    err_tail_.append(buffer, static_cast<std::size_t>(n));
    if (err_tail_.size() > kMaxStderrTail) err_tail_.erase(0, err_tail_.size() - kMaxStderrTail);
  }
}

WorkerReply WorkerProcess::request(const std::string& line, double timeout_seconds, std::size_t max_reply_bytes) {
  if (pid_ <= 0) start();
  const auto begin = Clock::now();
  WorkerReply reply;
  const auto fail = [&](std::string why) {
    drain_stderr();
    int status = 0;
    // A worker that closed its output is ending: give it a moment to say why (its exit status).
    for (int tries = 0; !reply.timed_out && pid_ > 0 && tries < 40; ++tries) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        why = describe_status(status);
        pid_ = -1;
        break;
      }
      ::usleep(5000);
    }
    const std::string tail = tail_lines(err_tail_, 3);
    stop();
    reply.failure = why + (tail.empty() ? "" : ": " + tail);
    reply.wall_seconds = std::chrono::duration<double>(Clock::now() - begin).count();
    return reply;
  };
  // Write the request (a broken pipe means the worker died; SIGPIPE is ignored by send flags).
  std::string message = line + "\n";
  std::size_t written = 0;
  ::signal(SIGPIPE, SIG_IGN);
  while (written < message.size()) {
    const ssize_t n = ::write(to_child_, message.data() + written, message.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("the worker stopped reading its requests");
    }
    written += static_cast<std::size_t>(n);
  }
  for (;;) {
    if (const auto newline = pending_out_.find('\n'); newline != std::string::npos) {
      reply.line = pending_out_.substr(0, newline);
      pending_out_.erase(0, newline + 1);
      drain_stderr();
      reply.wall_seconds = std::chrono::duration<double>(Clock::now() - begin).count();
      return reply;
    }
    if (pending_out_.size() > max_reply_bytes) return fail("the worker's reply exceeded " + std::to_string(max_reply_bytes) + " bytes");
    const double left = timeout_seconds - std::chrono::duration<double>(Clock::now() - begin).count();
    if (left <= 0) {
      reply.timed_out = true;
      return fail("timed out after " + std::to_string(timeout_seconds) + " s");
    }
    pollfd fds[2] = {{from_child_, POLLIN, 0}, {child_err_, POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno != EINTR) return fail(std::string("poll failed: ") + std::strerror(errno));
    if (fds[1].revents) drain_stderr();
    if (fds[0].revents) {
      char buffer[65536];
      const ssize_t n = ::read(from_child_, buffer, sizeof buffer);
      if (n == 0) return fail("the worker ended without answering");
      if (n > 0) pending_out_.append(buffer, static_cast<std::size_t>(n));
    }
  }
}

}  // namespace perftune
