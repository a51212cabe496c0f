// libFuzzer target: feeds arbitrary bytes to the train / eval config parser (StudyConfig::load:
// JSON syntax, sources, split, inline or referenced model hyper-parameters, train options,
// models). TRAIN.json and EVAL.json share this one parser. The contract under test: a bad config
// raises InputError naming its JSON path, never a crash, a hang or another exception type.
#include <cstdint>
#include <string>

#include "fuzz/scratch_file.h"
#include "ir/input_error.h"
#include "surrogate/study/study_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = perftune::fuzz::write_scratch_file(data, size, "study", ".json");
  if (path.empty()) return 0;
  try {
    const perftune::StudyConfig config = perftune::StudyConfig::load(path);
    (void)config.sources.size();
  } catch (const perftune::InputError&) {
  }
  return 0;
}
