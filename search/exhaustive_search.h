#pragma once
// Scores every valid config of a small space with the model (in batches) and proposes the best
// unmeasured ones; without a model, proposes them in enumeration order. For spaces that fit in
// memory only: larger ones are an error, not a silent truncation.
#include <cstdint>

#include "search/strategy.h"

namespace perftune {

struct ExhaustiveOptions {
  std::uint64_t max_configs = 1'000'000;  // enumeration limit: ~1M configs is ~100 MB of Config vectors
  std::size_t batch = 65'536;             // configs per predict() call, bounding the model's memory
};

class ExhaustiveSearch : public Strategy {
 public:
  explicit ExhaustiveSearch(ExhaustiveOptions options = {}) : options_(options) {}
  std::string name() const override { return "exhaustive"; }
  // Throws std::length_error naming the limit when the space has more than max_configs configs.
  std::vector<Config> propose(const SearchContext& context, std::size_t n) override;

 private:
  ExhaustiveOptions options_;
  const SearchSpace* enumerated_for_ = nullptr;
  std::vector<Config> all_;
};

}  // namespace perftune
