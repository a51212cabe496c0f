#pragma once
// What the OS reports about this host, as the backends and calibration read it (no measuring:
// offline/calibrate.h measures).
#include <cstdint>
#include <string>

namespace perftune {

struct CacheSizes {
  std::int64_t l1d = 0, l2 = 0, l3 = 0;  // bytes per core (L3: per sharing group); 0 = unknown
};

// L1d, L2, L3 from /sys/devices/system/cpu/cpu0/cache, else sysconf; 0 where neither knows.
CacheSizes read_cache_sizes();
// "model name" from /proc/cpuinfo, else "unknown cpu".
std::string read_cpu_name();

}  // namespace perftune
