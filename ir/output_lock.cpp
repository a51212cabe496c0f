#include "ir/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace perftune {

namespace {

// What the holder wrote into the lock file: its PID, or "" if it has not written it yet.
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  std::string pid = n > 0 ? std::string(text, static_cast<std::size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

OutputLock::OutputLock(const std::string& lock_file, const std::string& output) {
  fd_ = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0 && (errno == EACCES || errno == EROFS)) {
    // A folder we may not write to: a lock file someone else left is still lockable read-only;
    // with none, no writer can use the folder at all, and the log's own open reports that,
    // naming the log (what a user needs to see), so go on unlocked.
    fd_ = ::open(lock_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return;
  }
  if (fd_ < 0) throw std::runtime_error("cannot open the lock file " + lock_file + " of " + output + ": " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = holder_of(fd_);
    ::close(fd_);
    fd_ = -1;
    if (error != EWOULDBLOCK) throw std::runtime_error("cannot lock " + lock_file + ": " + std::strerror(error));
    throw std::runtime_error(output + " is in use by another perftune (process " + (pid.empty() ? "unknown" : pid) +
                             ", lock " + lock_file + "); wait for it to finish or stop it, or choose another output");
  }
  // Ours now: say who holds it, for the message a second process prints. If this fails (a
  // read-only lock file), the lock holds all the same; only that PID would be stale or missing.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0) (void)!::pwrite(fd_, pid.data(), pid.size(), 0);
}

OutputLock::OutputLock(OutputLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

OutputLock::~OutputLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays, empty of meaning
}

void create_output_folder(const std::string& folder) {
  std::error_code error;
  if (std::filesystem::exists(folder, error) && !std::filesystem::is_directory(folder, error))
    throw std::runtime_error("the output folder " + folder + " is a file; choose a folder (it is created if missing)");
  std::filesystem::create_directories(folder, error);
  if (error) throw std::runtime_error("cannot create the output folder " + folder + ": " + error.message());
}

OutputLock lock_output_folder(const std::string& folder) {
  create_output_folder(folder);
  return OutputLock((std::filesystem::path(folder) / ".perftune.lock").string(), "the output folder " + folder);
}

}  // namespace perftune
