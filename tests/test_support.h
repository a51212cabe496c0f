#pragma once
// Paths and data lookup shared by the tests.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <mutex>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "ir/data_path.h"

namespace perftune {

inline std::string source_path(const std::string& relative) { return std::string(PERFTUNE_SOURCE_DIR) + "/" + relative; }

// A fresh, empty folder under the build tree for one test.
inline std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::path(PERFTUNE_BINARY_DIR) / "test_scratch" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Processes (other than this one) whose command line contains `marker`, e.g. a unique sleep
// length: how tests count children left behind.
inline int count_processes_with(const std::string& marker) {
  int count = 0;
  const std::string self = std::to_string(::getpid());
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || name == self) continue;
    // Read with read(2), not an ifstream: a process that exits between open and read makes the read
    // fail with ESRCH, which libstdc++'s filebuf turns into an exception; here it is just gone.
    const int fd = ::open((entry.path() / "cmdline").c_str(), O_RDONLY);
    if (fd < 0) continue;
    std::string cmdline;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) cmdline.append(buffer, static_cast<size_t>(n));
    ::close(fd);
    if (cmdline.find(marker) != std::string::npos) ++count;
  }
  return count;
}

namespace testing {

// For a test that reads a FIFO and expects a refusal: if the reader blocks instead (opening a FIFO
// for reading waits for a writer), a writer is opened after `seconds`, once, and closed at once, so
// the reader gets end-of-file and the test fails on its checks rather than hanging ctest. When
// the reader refuses the FIFO, the destructor ends the wait and nothing is opened.
class FifoUnblocker {
 public:
  explicit FifoUnblocker(std::string path, double seconds = 3.0)
      : path_(std::move(path)), thread_([this, seconds] {
          std::unique_lock lock(mutex_);
          if (cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) return;
          // O_NONBLOCK: with no reader waiting this fails (ENXIO) instead of blocking; retried.
          while (!done_) {
            const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0) {
              ::close(fd);
              return;
            }
            cv_.wait_for(lock, std::chrono::milliseconds(50), [this] { return done_; });
          }
        }) {}
  ~FifoUnblocker() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  FifoUnblocker(const FifoUnblocker&) = delete;
  FifoUnblocker& operator=(const FifoUnblocker&) = delete;

 private:
  std::string path_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace testing

}  // namespace perftune

// Skips the rest of a test, loudly, when a shared data file is absent.
#define PERFTUNE_REQUIRE_DATA(var, relative)                                                         \
  const std::optional<std::string> var##_found = perftune::find_data(relative);                      \
  if (!var##_found) {                                                                                \
    WARN("SKIPPED: shared data file " << relative << " not found under " << perftune::data_dir()     \
                                      << " (set PERFTUNE_DATA)");                                   \
    return;                                                                                          \
  }                                                                                                  \
  const std::string var = *var##_found
