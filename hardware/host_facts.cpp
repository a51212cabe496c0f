#include "hardware/host_facts.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

namespace perftune {

namespace {

std::int64_t parse_size(std::string text) {
  // sysfs writes "32K", "1024K", "32768K" (or "2M").
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return 0;
  std::int64_t scale = 1;
  if (text.back() == 'K') scale = 1024;
  if (text.back() == 'M') scale = 1024 * 1024;
  if (scale != 1) text.pop_back();
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  return end == text.c_str() ? 0 : static_cast<std::int64_t>(value) * scale;
}

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

CacheSizes read_cache_sizes() {
  CacheSizes sizes;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    const std::string level = read_line(dir + "level");
    if (level.empty()) break;
    const std::string type = read_line(dir + "type");
    const std::int64_t size = parse_size(read_line(dir + "size"));
    if (level == "1" && type == "Data") sizes.l1d = size;
    if (level == "2" && type != "Instruction") sizes.l2 = size;
    if (level == "3" && type != "Instruction") sizes.l3 = size;
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (sizes.l1d == 0) sizes.l1d = std::max<long>(0, sysconf(_SC_LEVEL1_DCACHE_SIZE));
  if (sizes.l2 == 0) sizes.l2 = std::max<long>(0, sysconf(_SC_LEVEL2_CACHE_SIZE));
  if (sizes.l3 == 0) sizes.l3 = std::max<long>(0, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
  return sizes;
}

std::string read_cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "unknown cpu";
}

}  // namespace perftune
