// Load time of every shared data source through load_source (the path `perftune inspect` takes).
// Usage: build/bench/bench_importers [repeats=5] [relative paths under the data folder...]
// Prints, per file, the median and minimum wall time over the repeats and the record count.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ir/data_path.h"
#include "ir/source.h"

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::vector<std::string> files;
  for (int i = 2; i < argc; ++i) files.push_back(argv[i]);
  if (files.empty())
    files = {"kernel_tuner/gemm/RTX_2080_Ti.json.gz", "kernel_tuner/dedispersion/A100.json.gz",
             "kernel_tuner/convolution/A6000.json.gz", "tpu/op_tuning_data.pb", "tpu/module_tuning_data_layout.pb"};
  std::printf("%-42s %10s %10s %10s\n", "source", "median s", "min s", "records");
  for (const std::string& relative : files) {
    const auto path = perftune::find_data(relative);
    if (!path) {
      std::printf("%-42s missing under %s\n", relative.c_str(), perftune::data_dir().c_str());
      continue;
    }
    std::vector<double> times;
    std::size_t records = 0;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      const perftune::Corpus corpus = perftune::load_source(*path);
      times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      records = corpus.measurement_count();
      if (records == 0) {
        std::fprintf(stderr, "%s: loaded no records\n", relative.c_str());
        return 1;
      }
    }
    std::sort(times.begin(), times.end());
    std::printf("%-42s %10.3f %10.3f %10zu\n", relative.c_str(), times[times.size() / 2], times.front(), records);
  }
  return 0;
}
