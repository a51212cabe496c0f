#pragma once
// Runs the real perftune binary for the command-line tests.
#include <cstdlib>
#include <string>
#include <vector>

#include "hardware/process/subprocess.h"
#include "test_support.h"

namespace perftune {

// Killed after `timeout_seconds` (a command that trains a model, e.g., needs more on a loaded machine).
inline SubprocessResult perftune_cli(std::vector<std::string> args, double timeout_seconds = 120) {
  const char* bin = std::getenv("PERFTUNE_BIN");
  args.insert(args.begin(), bin ? bin : std::string(PERFTUNE_BINARY_DIR) + "/perftune");
  return run_subprocess(args, "", timeout_seconds);
}

}  // namespace perftune
