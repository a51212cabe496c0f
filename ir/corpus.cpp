#include "ir/corpus.h"

#include <unordered_set>

namespace perftune {

std::size_t MeasuredKernel::failed_count() const {
  std::size_t failed = 0;
  for (const auto& m : measurements) failed += m.result.ok() ? 0 : 1;
  return failed;
}

std::optional<std::size_t> MeasuredKernel::best_index() const {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < measurements.size(); ++i)
    if (measurements[i].result.ok() && (!best || measurements[i].result.seconds < measurements[*best].result.seconds))
      best = i;
  return best;
}

std::vector<const Measurement*> MeasuredKernel::first_recordings() const {
  std::unordered_set<Config, ConfigHash> seen;
  std::vector<const Measurement*> first;
  for (const Measurement& m : measurements)
    if (seen.insert(m.config).second) first.push_back(&m);
  return first;
}

std::size_t Corpus::measurement_count() const {
  std::size_t total = program_measurements.size();
  for (const auto& kernel : kernels) total += kernel.measurements.size();
  return total;
}

std::size_t Corpus::failed_count() const {
  std::size_t failed = 0;
  for (const auto& m : program_measurements) failed += m.result.ok() ? 0 : 1;
  for (const auto& kernel : kernels) failed += kernel.failed_count();
  return failed;
}

Corpus single_kernel_corpus(std::string format, std::string path, MeasuredKernel kernel) {
  Corpus corpus;
  corpus.format = std::move(format);
  corpus.path = std::move(path);
  corpus.kernels.push_back(std::move(kernel));
  return corpus;
}

}  // namespace perftune
