// libFuzzer target: feeds arbitrary bytes to the experiment parser (load_experiment: JSON syntax,
// spaces, strategies, budgets, then every (space, strategy) pair checked as a campaign). The
// contract under test: a bad experiment raises InputError naming its JSON path, never a crash, a
// hang or another exception type.
#include <cstdint>
#include <string>

#include "experiments/experiment.h"
#include "fuzz/scratch_file.h"
#include "ir/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = perftune::fuzz::write_scratch_file(data, size, "experiment", ".json");
  if (path.empty()) return 0;
  try {
    const perftune::Experiment experiment = perftune::load_experiment(path);
    (void)experiment.max_measurements();
  } catch (const perftune::InputError&) {
  }
  return 0;
}
