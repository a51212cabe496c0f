#pragma once
// How long one propose() call may take: the tuner sizes the search effort of a round to the
// hardware time it buys (a share of the measured time, TunerOptions::search_time_share), and
// strategies with an open-ended effort (annealing steps, evolution generations) stop at the
// deadline. A default-constructed deadline never passes, so search is then limited only by its
// own options (and is deterministic for a given seed).
#include <algorithm>
#include <chrono>

namespace perftune {

class SearchDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  SearchDeadline() = default;
  // A deadline `seconds` from now (<= 0: already passed, the strategy does its minimum).
  static SearchDeadline after(double seconds) {
    SearchDeadline deadline;
    deadline.limited_ = true;
    deadline.start_ = Clock::now();
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
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  bool limited_ = false;
  Clock::time_point start_{};
  double allowance_ = 0.0;
};

}  // namespace perftune
