#pragma once
// A search strategy proposes configs to measure next. Strategies that use a cost model score
// candidates through CostModel::predict on whole batches (never one config at a time);
// model-free strategies steer by the measured history only.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/search_space.h"
#include "search/history.h"
#include "search/search_deadline.h"
#include "surrogate/cost_model.h"

namespace perftune {

struct SearchContext {
  const Kernel& kernel;
  const SearchSpace& space;
  CostModel* model;  // nullptr when the campaign has no model
  const History& history;
  std::uint64_t seed;  // the campaign's seed
  std::size_t round;   // 0, 1, ...: strategies derive their random streams from (seed, round, ...)
  // When this round's search must end (the tuner's time share); strategies whose effort is
  // open-ended stop there after their minimum work. Unlimited by default.
  SearchDeadline deadline = {};
  // Configs trusted before anything is measured: the campaign's measure_first (its default and
  // the compiler's heuristic), which round 0 measures beside the first proposals. Empty when the
  // campaign has none.
  std::span<const Config> anchors = {};
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;
  // True if propose() needs context.model to be non-null.
  virtual bool needs_model() const { return false; }
  // Up to `n` distinct valid configs that are not in context.history, best first by the strategy's
  // own estimate. Fewer when the space (or what is left of it) is small. Deterministic for the same
  // context and the same sequence of earlier calls, whatever the number of threads, as long as
  // context.deadline is unlimited (a deadline makes the effort depend on the machine's speed).
  virtual std::vector<Config> propose(const SearchContext& context, std::size_t n) = 0;
  // Models the strategy ranks with besides context.model (a re-ranker), which learn from the same
  // measurements: the tuner updates them where it updates context.model, so one place updates models.
  virtual std::vector<CostModel*> learning_models() { return {}; }
};

// Scores `configs` with one predict() call. NaN scores become +infinity (ranked last), so a
// model's bad output cannot poison a comparison.
std::vector<float> predict_scores(CostModel& model, const Kernel& kernel, const SearchSpace& space,
                                  std::span<const Config> configs);

// `configs` best-scored first by one predict() call, ties in their given order.
std::vector<Config> rank_by_model(CostModel& model, const Kernel& kernel, const SearchSpace& space, std::vector<Config> configs);

// Standard deviation of the finite scores, or 1 when there is none to measure (fewer than two,
// or all equal): the unit in which annealing temperatures and selection pressure are stated when
// a model's scores have no unit of their own.
double score_spread(std::span<const float> scores);

}  // namespace perftune
