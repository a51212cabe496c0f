#pragma once
// The time the tuning loop reads: its search deadlines (search/search_deadline.h) and the wall
// time it accounts for (autotuner/tuning_session.h). Injected so that a test of the search time
// share can advance time by hand instead of sleeping, which on a loaded 2-core machine is late by
// an unknown amount.
namespace perftune {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary, fixed origin; never decreases.
  virtual double now_seconds() const = 0;
};

// std::chrono::steady_clock: the clock of every run outside tests.
const Clock& steady_clock();

}  // namespace perftune
