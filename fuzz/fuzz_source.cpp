// libFuzzer target: feeds arbitrary bytes to one importer through load_source(), as a file with
// the suffix PERFTUNE_FUZZ_SUFFIX. The contract under test: bad input raises InputError (or the
// documented std::invalid_argument from a search space), never a crash, a hang or another
// exception type, which libFuzzer reports as a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/source.h"

namespace {
std::string scratch_file() {
  // One file per fuzzing process, in memory-backed /dev/shm when there is one.
  const char* folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(folder) + "/perftune-fuzz-" + std::to_string(getpid()) + PERFTUNE_FUZZ_SUFFIX;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_file();
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  try {
    const perftune::Corpus corpus = perftune::load_source(path);
    // Touch what was loaded so lazy mistakes surface too.
    for (const auto& program : corpus.programs) (void)program->instruction_count_with_called();
    for (const auto& kernel : corpus.kernels) (void)kernel.best_index();
  } catch (const perftune::InputError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
