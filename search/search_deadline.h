#pragma once
// How long one propose() call may take: the tuner sizes the search effort of a round to the
// hardware time it buys (a share of the measured time, TunerOptions::search_time_share), and
// strategies with an open-ended effort (annealing steps, evolution generations) stop at the
// deadline. A default-constructed deadline never passes, so search is then limited only by its
// own options (and is deterministic for a given seed).
#include <algorithm>

#include "ir/clock.h"

namespace perftune {

class SearchDeadline {
 public:
  SearchDeadline() = default;
  // A deadline `seconds` from now on `clock` (<= 0: already passed, the strategy does its minimum).
  static SearchDeadline after(double seconds, const Clock& clock = steady_clock()) {
    SearchDeadline deadline;
    deadline.limited_ = true;
    deadline.clock_ = &clock;
    deadline.start_ = clock.now_seconds();
    deadline.allowance_ = std::max(0.0, seconds);
    return deadline;
  }

  bool limited() const { return limited_; }
  double allowance_seconds() const { return allowance_; }
  bool passed() const { return limited_ && elapsed() >= allowance_; }
  // The share of the allowance used so far, in [0, 1]; 0 when unlimited. Annealing cools on
  // max(step share, time share), so a cut-short round still ends cold instead of hot.
  double used_share() const {
    if (!limited_) return 0.0;
    if (allowance_ <= 0) return 1.0;
    return std::min(1.0, elapsed() / allowance_);
  }

 private:
  double elapsed() const { return clock_->now_seconds() - start_; }

  bool limited_ = false;
  const Clock* clock_ = &steady_clock();
  double start_ = 0.0;
  double allowance_ = 0.0;
};

}  // namespace perftune
