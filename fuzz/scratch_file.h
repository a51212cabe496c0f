#pragma once
// The fuzz targets' input file: libFuzzer hands over bytes, the parsers under test read files.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace perftune::fuzz {

// Writes the bytes to this process's scratch file (`name` + `suffix`, in memory-backed /dev/shm
// when there is one) and returns its path; "" when it cannot be written.
inline std::string write_scratch_file(const std::uint8_t* data, std::size_t size, const std::string& name,
                                      const std::string& suffix) {
  static const std::string folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  const std::string path = folder + "/perftune-fuzz-" + name + "-" + std::to_string(getpid()) + suffix;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return "";
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  return path;
}

}  // namespace perftune::fuzz
