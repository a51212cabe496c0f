// libFuzzer target: feeds arbitrary bytes to the campaign parser (load_campaign: JSON syntax,
// then every section through the factories' spec parsers). The contract under test: a bad
// campaign raises InputError naming its JSON path, never a crash, a hang or another exception.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "autotuner/campaign.h"
#include "ir/input_error.h"

namespace {
std::string scratch_file() {
  const char* folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return std::string(folder) + "/perftune-fuzz-campaign-" + std::to_string(getpid()) + ".json";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = scratch_file();
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  try {
    const perftune::Campaign campaign = perftune::load_campaign(path);
    (void)campaign.name.size();
  } catch (const perftune::InputError&) {
  }
  return 0;
}
