#include "hardware/process/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace perftune {

namespace {

// Enough to show a compiler's first errors without holding megabytes of template noise.
constexpr std::size_t kMaxCapturedStderr = 64 * 1024;
// How often a child's exit is checked while its pipes are still open (a background process may
// hold them after the child has answered). Short against any measurement, long for the CPU.
constexpr int kExitCheckMilliseconds = 10;
// What is read after the child has exited: what it left in the pipes (at most a pipe's capacity,
// 64 KiB by default, 1 MiB at most) and no more, however fast a left-over writer writes.
constexpr std::size_t kMaxDrainBytes = std::size_t{1} << 20;
// Live process groups the watchdog can track at once (one per running child).
constexpr std::size_t kMaxWatchedGroups = 4096;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// --- The watchdog: kills every live child group when perftune dies ---------------------------

// Messages are two int32 (8 bytes < PIPE_BUF): writes from any thread or child arrive whole.
enum : std::int32_t { kForget = 0, kWatch = 1 };

[[noreturn]] void watchdog_main(int read_fd) {
  // Only async-signal-safe calls from here on: this is a fork of a threaded process.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  // A Ctrl-C reaches perftune's whole process group, the watchdog included: it must outlive
  // perftune to do its job, and ends on its own at end-of-file.
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(s, &ignore, nullptr);
  // Close every inherited descriptor (other children's pipes among them): holding one would keep
  // a child from ever seeing end-of-file.
#ifdef SYS_close_range
  const auto keep = static_cast<unsigned>(read_fd);
  const bool closed = (keep == 0 || ::syscall(SYS_close_range, 0u, keep - 1, 0u) == 0) &&
                      ::syscall(SYS_close_range, keep + 1, ~0u, 0u) == 0;
#else
  const bool closed = false;
#endif
  if (!closed)
    for (int fd = 0; fd < 65536; ++fd)
      if (fd != read_fd) ::close(fd);
  static pid_t groups[kMaxWatchedGroups];
  std::size_t count = 0;
  for (;;) {
    std::int32_t message[2];
    const ssize_t n = ::read(read_fd, message, sizeof message);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof message)) break;  // end-of-file: perftune is gone
    if (message[0] == kWatch) {
      if (count < kMaxWatchedGroups) groups[count++] = message[1];
    } else {
      for (std::size_t i = 0; i < count; ++i)
        if (groups[i] == message[1]) {
          groups[i] = groups[--count];
          break;
        }
    }
  }
  for (std::size_t i = 0; i < count; ++i) ::kill(-groups[i], SIGKILL);
  ::_exit(0);
}

// The write end of the watchdog's pipe (close-on-exec, so no child keeps it open), or -1 if the
// watchdog could not be started (then only the parent-death signal guards the children). One
// watchdog per process: a fork of perftune (tests do this) starts its own, since the inherited one
// watches the pipe its parent still holds and would not notice the fork dying.
int watchdog_fd() {
  static std::mutex mutex;
  static pid_t owner = -1;
  static int fd = -1;
  std::lock_guard lock(mutex);
  if (owner == ::getpid()) return fd;
  if (fd >= 0) ::close(fd);  // the parent's, inherited through fork
  fd = -1;
  owner = ::getpid();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return fd;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    watchdog_main(fds[0]);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return fd;
  }
  fd = fds[1];
  return fd;
}

void tell_watchdog(int fd, std::int32_t what, pid_t group) {
  if (fd < 0) return;
  const std::int32_t message[2] = {what, static_cast<std::int32_t>(group)};
  while (::write(fd, message, sizeof message) < 0 && errno == EINTR) {
  }
}

// argv[0] as execve needs it: searched in PATH unless it names a path (done before fork, since
// the child may only make async-signal-safe calls).
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  throw std::runtime_error("cannot start '" + name + "': " + std::strerror(ENOENT));
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

}  // namespace

// --- ChildProcess -------------------------------------------------------------------------------

ChildProcess ChildProcess::start(const std::vector<std::string>& argv, const std::vector<std::string>& environment) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess::start: empty command");
  // A child that exits before reading its input must not kill us with SIGPIPE (nor one that
  // starts while the watchdog is gone); write() returns EPIPE instead, which callers handle.
  static const bool sigpipe_ignored = (::signal(SIGPIPE, SIG_IGN), true);
  (void)sigpipe_ignored;
  const std::string program = resolve_program(argv[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child's environment: perftune's, with `environment`'s names replaced or added.
  std::vector<std::string> env_strings;
  const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
  std::set<std::string> overridden;
  for (const std::string& entry : environment) overridden.insert(name_of(entry));
  for (char** e = environ; *e; ++e)
    if (!overridden.count(name_of(*e))) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), environment.begin(), environment.end());
  std::vector<char*> env;
  for (std::string& entry : env_strings) env.push_back(entry.data());
  env.push_back(nullptr);
  const int watchdog = watchdog_fd();

  int in[2], out[2], err[2], exec_error[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : in) ::close(fd);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(e));
  }
  if (::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(exec_error, O_CLOEXEC) != 0) {
    const int e = errno;
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(e));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // The child: async-signal-safe calls only until exec.
    ::setpgid(0, 0);
    tell_watchdog(watchdog, kWatch, ::getpid());  // before exec, so nothing it starts escapes
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // perftune died during the fork
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::signal(SIGPIPE, SIG_DFL);  // perftune ignores it; a runner should not inherit that
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(program.c_str(), args.data(), env.data());
    const int error = errno;
    while (::write(exec_error[1], &error, sizeof error) < 0 && errno == EINTR) {
    }
    ::_exit(127);
  }
  const int fork_error = errno;
  for (int fd : {in[0], out[1], err[1], exec_error[1]}) ::close(fd);
  if (pid < 0) {
    for (int fd : {in[1], out[0], err[0], exec_error[0]}) ::close(fd);
    throw std::runtime_error("cannot start '" + argv[0] + "': fork: " + std::strerror(fork_error));
  }
  ::setpgid(pid, 0);  // also here, so the group exists before we might signal it
  ChildProcess child;
  child.pid_ = pid;
  child.stdin_ = in[1];
  child.stdout_ = out[0];
  child.stderr_ = err[0];
  for (int fd : {child.stdin_, child.stdout_, child.stderr_}) set_nonblocking(fd);
  int error = 0;
  ssize_t n;
  while ((n = ::read(exec_error[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  if (n == static_cast<ssize_t>(sizeof error)) {
    child.reap();
    throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(error));
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = std::exchange(other.pid_, -1);
    stdin_ = std::exchange(other.stdin_, -1);
    stdout_ = std::exchange(other.stdout_, -1);
    stderr_ = std::exchange(other.stderr_, -1);
    reaped_ = std::exchange(other.reaped_, false);
    status_ = other.status_;
  }
  return *this;
}

ChildProcess::~ChildProcess() { release(); }

void ChildProcess::release() {
  close_stdin();
  close_stdout();
  close_stderr();
  if (pid_ > 0 && !reaped_) reap();
  pid_ = -1;
}

void ChildProcess::close_stdin() { close_fd(stdin_); }
void ChildProcess::close_stdout() { close_fd(stdout_); }
void ChildProcess::close_stderr() { close_fd(stderr_); }

bool ChildProcess::has_exited() const {
  if (reaped_) return true;
  siginfo_t info{};
  // WNOWAIT leaves it a zombie: its pid, and so its group id, stay reserved until reap().
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return false;
  return info.si_pid == pid_;
}

void ChildProcess::kill_group() {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, SIGKILL);
}

int ChildProcess::reap() {
  if (reaped_) return status_;
  kill_group();  // stragglers: a background process the child left behind
  tell_watchdog(watchdog_fd(), kForget, pid_);
  while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  return status_;
}

// --- run_subprocess -----------------------------------------------------------------------------

std::string SubprocessResult::describe() const {
  if (timed_out) return "timed out after " + std::to_string(wall_seconds) + " s";
  if (stdout_overflow) return "printed more than " + std::to_string(stdout_limit) + " bytes on stdout (killed)";
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

std::optional<std::string> timeout_problem(double seconds) {
  if (!std::isfinite(seconds)) return "a timeout must be a finite number of seconds";
  if (seconds <= 0) return "a timeout must be above 0 s (there is no 'no limit': a hung child would hold the tuner forever)";
  return std::nullopt;
}

std::string tail_lines(const std::string& text, std::size_t max_lines) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  std::string joined;
  const std::size_t first = lines.size() > max_lines ? lines.size() - max_lines : 0;
  for (std::size_t i = first; i < lines.size(); ++i) joined += (i > first ? " | " : "") + lines[i];
  return joined;
}

SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::string& input, double timeout_seconds,
                                std::size_t max_stdout_bytes) {
  if (auto problem = timeout_problem(timeout_seconds)) throw std::invalid_argument("run_subprocess: " + *problem);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  ChildProcess child = ChildProcess::start(argv);
  if (input.empty()) child.close_stdin();

  SubprocessResult result;
  result.stdout_limit = max_stdout_bytes;
  std::size_t written = 0;
  char buffer[65536];
  // One read from the child's stdout or stderr: the bytes read, 0 when nothing is waiting, -1 at
  // end-of-file, on an error, or when stdout overflows (then the caller stops listening to it).
  const auto read_once = [&](int fd, bool is_stdout) -> ssize_t {
    const ssize_t r = ::read(fd, buffer, sizeof buffer);
    if (r < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (r == 0) return -1;
    const auto n = static_cast<std::size_t>(r);
    if (is_stdout) {
      if (result.out.size() + n > max_stdout_bytes) {
        result.out.append(buffer, max_stdout_bytes - result.out.size());
        result.stdout_overflow = true;
        return -1;
      }
      result.out.append(buffer, n);
    } else {
      result.err.append(buffer, n);
      if (result.err.size() > 2 * kMaxCapturedStderr) result.err.erase(0, result.err.size() - kMaxCapturedStderr);
    }
    return r;
  };

  for (;;) {
    if (child.has_exited()) {
      // What it left in the pipes is its answer; a background process still holding them is not.
      for (auto [fd, is_stdout] : {std::pair{child.stdout_fd(), true}, std::pair{child.stderr_fd(), false}}) {
        std::size_t drained = 0;
        while (fd >= 0 && drained < kMaxDrainBytes) {
          const ssize_t r = read_once(fd, is_stdout);
          if (r <= 0) break;
          drained += static_cast<std::size_t>(r);
        }
      }
      break;
    }
    const double left = timeout_seconds - elapsed();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    const int out_slot = child.stdout_fd() >= 0 ? n : -1;
    if (out_slot >= 0) fds[n++] = {child.stdout_fd(), POLLIN, 0};
    const int err_slot = child.stderr_fd() >= 0 ? n : -1;
    if (err_slot >= 0) fds[n++] = {child.stderr_fd(), POLLIN, 0};
    const int in_slot = child.stdin_fd() >= 0 ? n : -1;
    if (in_slot >= 0) fds[n++] = {child.stdin_fd(), POLLOUT, 0};
    // With its pipes closed the child can only exit or overrun: check often so neither waits.
    const int check_ms = out_slot < 0 && err_slot < 0 ? 1 : kExitCheckMilliseconds;
    const int wait_ms = std::min(check_ms, static_cast<int>(left * 1000) + 1);
    const int ready = ::poll(fds, static_cast<nfds_t>(n), wait_ms);
    if (ready <= 0) continue;  // a timeout of the wait, or EINTR: the checks above run again
    if (in_slot >= 0 && (fds[in_slot].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = ::write(child.stdin_fd(), input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      // A runner that exits without reading its input gives EPIPE: we stop feeding it.
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) child.close_stdin();
    }
    if (out_slot >= 0 && (fds[out_slot].revents & (POLLIN | POLLHUP | POLLERR)) && read_once(child.stdout_fd(), true) < 0)
      child.close_stdout();
    if (result.stdout_overflow) break;
    if (err_slot >= 0 && (fds[err_slot].revents & (POLLIN | POLLHUP | POLLERR)) && read_once(child.stderr_fd(), false) < 0)
      child.close_stderr();
  }
  const int status = child.reap();  // kills whatever is left of its group first
  result.wall_seconds = elapsed();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out && !result.stdout_overflow) result.signal = WTERMSIG(status);
  if (result.err.size() > kMaxCapturedStderr) result.err.erase(0, result.err.size() - kMaxCapturedStderr);
  return result;
}

}  // namespace perftune
