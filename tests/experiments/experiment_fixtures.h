#pragma once
// Fixtures of the experiments tests: a toy recorded space in Kernel Tuner's cache format (replayed
// by tuning experiments, split by device in model studies) and a line counter for their CSVs.
#include <cmath>
#include <cstddef>
#include <fstream>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace perftune::testing {

// Runtimes grow with the distance of (log2 bx, log2 by) from (4, 2), times +-10% seeded noise and
// `scale` (a slower device); every 13th config fails to compile.
inline void write_toy_cache(const std::string& path, const std::string& device = "Toy GPU", double scale = 1.0,
                            unsigned seed = 3) {
  nlohmann::json cache = {{"device_name", device},
                          {"kernel_name", "toy"},
                          {"problem_size", {64, 64}},
                          {"tune_params_keys", {"bx", "by"}},
                          {"tune_params", {{"bx", {1, 2, 4, 8, 16, 32, 64, 128}}, {"by", {1, 2, 4, 8, 16, 32, 64, 128}}}}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(0.9, 1.1);
  int i = 0;
  for (int bx : {1, 2, 4, 8, 16, 32, 64, 128})
    for (int by : {1, 2, 4, 8, 16, 32, 64, 128}) {
      nlohmann::json entry = {{"bx", bx}, {"by", by}, {"compile_time", 50.0}, {"benchmark_time", 10.0}};
      if (++i % 13 == 0) entry["time"] = "CompilationFailedConfig";
      else entry["time"] = scale * (1.0 + std::abs(std::log2(bx) - 4) + std::abs(std::log2(by) - 2)) * noise(rng);
      cache["cache"][std::to_string(bx) + "," + std::to_string(by)] = entry;
    }
  std::ofstream(path) << cache.dump();
}

// Lines in a text file (a CSV's header included).
inline std::size_t line_count(const std::string& path) {
  std::ifstream in(path);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  return lines;
}

}  // namespace perftune::testing
