#pragma once
// Paths and data lookup shared by the tests.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

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
