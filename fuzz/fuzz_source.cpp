// libFuzzer target: feeds arbitrary bytes to one importer through load_source(), as a file with
// the suffix PERFTUNE_FUZZ_SUFFIX. The contract under test: bad input raises InputError (or the
// documented std::invalid_argument from a search space), never a crash, a hang or another
// exception type, which libFuzzer reports as a finding.
#include <cstdint>
#include <string>

#include "fuzz/scratch_file.h"
#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/source.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = perftune::fuzz::write_scratch_file(data, size, "source", PERFTUNE_FUZZ_SUFFIX);
  if (path.empty()) return 0;
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
