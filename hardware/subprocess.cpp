#include "hardware/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <tuple>

extern char** environ;

namespace perftune {

namespace {

// Enough to show a compiler's first errors without holding megabytes of template noise.
constexpr std::size_t kMaxCapturedStderr = 64 * 1024;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    close_fd(read);
    close_fd(write);
  }
};

}  // namespace

std::string SubprocessResult::describe() const {
  if (timed_out) return "timed out after " + std::to_string(wall_seconds) + " s";
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit code " + std::to_string(exit_code);
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

SubprocessResult run_subprocess(const std::vector<std::string>& argv, const std::string& input,
                                double timeout_seconds) {
  if (argv.empty()) throw std::invalid_argument("run_subprocess: empty command");
  // A runner that exits before reading its input must not kill us with SIGPIPE; write() then
  // returns EPIPE, which is handled below.
  static const bool sigpipe_ignored = (::signal(SIGPIPE, SIG_IGN), true);
  (void)sigpipe_ignored;
  Pipe in, out, err;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write, 2);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Own process group, so a timeout kills the runner and whatever it started (a shell's children).
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawn_error != 0)
    throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(spawn_error));
  close_fd(in.read);
  close_fd(out.write);
  close_fd(err.write);
  ::fcntl(in.write, F_SETFL, O_NONBLOCK);
  if (input.empty()) close_fd(in.write);

  SubprocessResult result;
  std::size_t written = 0;
  char buffer[65536];
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (out.read >= 0 || err.read >= 0) {
    pollfd fds[3];
    int n = 0;
    const int out_slot = out.read >= 0 ? n : -1;
    if (out.read >= 0) fds[n++] = {out.read, POLLIN, 0};
    const int err_slot = err.read >= 0 ? n : -1;
    if (err.read >= 0) fds[n++] = {err.read, POLLIN, 0};
    const int in_slot = in.write >= 0 ? n : -1;
    if (in.write >= 0) fds[n++] = {in.write, POLLOUT, 0};
    int wait_ms = -1;
    if (timeout_seconds > 0) {
      const double left = timeout_seconds - elapsed();
      if (left <= 0) {
        result.timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    const int ready = ::poll(fds, n, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) continue;  // the deadline check above fires next
    if (in_slot >= 0 && (fds[in_slot].revents & (POLLOUT | POLLERR | POLLHUP))) {
      const ssize_t w = ::write(in.write, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<std::size_t>(w);
      // A runner that exits without reading its input gives EPIPE: we stop feeding it.
      if (w < 0 && errno != EAGAIN) close_fd(in.write);
      if (written == input.size()) close_fd(in.write);
    }
    for (auto [slot, fd, sink] : {std::tuple{out_slot, &out.read, &result.out}, std::tuple{err_slot, &err.read, &result.err}}) {
      if (slot < 0 || !(fds[slot].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t r = ::read(*fd, buffer, sizeof buffer);
      if (r > 0) {
        sink->append(buffer, static_cast<std::size_t>(r));
        if (sink == &result.err && sink->size() > 2 * kMaxCapturedStderr)
          sink->erase(0, sink->size() - kMaxCapturedStderr);
      } else if (r == 0 || errno != EINTR) {
        close_fd(*fd);
      }
    }
  }
  close_fd(in.write);
  // A child may close its pipes and still run on: keep watching the deadline while it does.
  int status = 0;
  for (;;) {
    if (result.timed_out) ::kill(-pid, SIGKILL);
    const pid_t done = ::waitpid(pid, &status, result.timed_out ? 0 : WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (timeout_seconds > 0 && elapsed() >= timeout_seconds) result.timed_out = true;
    else if (done == 0) ::usleep(1000);
  }
  result.wall_seconds = elapsed();
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status) && !result.timed_out) result.signal = WTERMSIG(status);
  if (result.err.size() > kMaxCapturedStderr) result.err.erase(0, result.err.size() - kMaxCapturedStderr);
  return result;
}

}  // namespace perftune
