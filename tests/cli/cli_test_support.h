#pragma once
// Runs the real perftune binary for the command-line tests.
#include <cstdlib>
#include <string>
#include <vector>

#include "hardware/process/subprocess.h"
#include "test_support.h"

namespace perftune {

inline SubprocessResult perftune_cli(std::vector<std::string> args) {
  const char* bin = std::getenv("PERFTUNE_BIN");
  args.insert(args.begin(), bin ? bin : std::string(PERFTUNE_BINARY_DIR) + "/perftune");
  return run_subprocess(args, "", 120);
}

}  // namespace perftune
