// libFuzzer target: feeds arbitrary bytes to the campaign parser (load_campaign: JSON syntax,
// then every section through the factories' spec parsers). The contract under test: a bad
// campaign raises InputError naming its JSON path, never a crash, a hang or another exception.
#include <cstdint>
#include <string>

#include "autotuner/campaign/campaign.h"
#include "fuzz/scratch_file.h"
#include "ir/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = perftune::fuzz::write_scratch_file(data, size, "campaign", ".json");
  if (path.empty()) return 0;
  try {
    const perftune::Campaign campaign = perftune::load_campaign(path);
    (void)campaign.name.size();
  } catch (const perftune::InputError&) {
  }
  return 0;
}
