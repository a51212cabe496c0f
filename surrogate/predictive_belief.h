#pragma once
// What a cost model believes of one kernel beyond its scores: its posterior, for a batch policy
// that samples it (search/batch_policy.h: batch Thompson sampling, a space-filling first batch).
// TVM keeps batch choice in its search policy; a model here only predicts, learns, and offers this.
// Optional: CostModel::belief() is none for a model without a posterior. Header-only, like
// cost_model.h, so search/ depends on it without linking a model.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ir/config.h"
#include "ir/random.h"

namespace perftune {

// The belief at a fixed set of candidates.
class CandidateScores {
 public:
  virtual ~CandidateScores() = default;
  // Each candidate's score at the fitted belief (lower is better): what the model ranks by.
  virtual std::vector<double> expected() const = 0;
  // Each candidate's score under one draw from the posterior; consumes `rng`.
  virtual std::vector<double> draw(Rng& rng) const = 0;
};

class PredictiveBelief {
 public:
  struct Measured {
    Config config;
    std::optional<double> log_seconds;  // none: it failed
  };
  virtual ~PredictiveBelief() = default;
  // False until the model has fitted the kernel (before, it may score every config alike).
  virtual bool fitted() const = 0;
  // The measurements the model learned from, oldest first.
  virtual std::vector<Measured> measured() const = 0;
  // For each of the model's sources in turn, its `count` best configs, best first, among those the
  // model has scored for the kernel and `keep` admits; none for a model with one source.
  virtual std::vector<Config> source_favourites(std::size_t count, const std::function<bool(const Config&)>& keep) const { return {}; }
  // The belief at `candidates`.
  virtual std::unique_ptr<CandidateScores> at(std::span<const Config> candidates) = 0;
};

}  // namespace perftune
