#pragma once
// Paths and data lookup shared by the tests.
#include <cstdlib>
#include <filesystem>
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
