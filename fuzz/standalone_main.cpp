// main() for the fuzz targets in a build without libFuzzer (PERFTUNE_FUZZ_LINK_CHECK): runs the
// target once on each file named on the command line, as libFuzzer does when given files. It
// makes the ordinary GCC build link every fuzz target, and replays a finding without clang:
//   build/fuzz/fuzz_record_log build-fuzz/findings/record_log-crash-...
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 2;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  return 0;
}
