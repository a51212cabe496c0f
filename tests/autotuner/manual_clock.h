#pragma once
// A clock that moves only when a test advances it: a fake strategy's search steps and a fake
// backend's measurements "take" exactly the time they advance, so the search time share is checked
// without sleeping (a sleep on a loaded 2-core machine overshoots by an unknown amount).
#include <atomic>

#include "ir/clock.h"

namespace perftune::testing {

class ManualClock : public Clock {
 public:
  double now_seconds() const override { return now_.load(); }
  void advance(double seconds) {
    double now = now_.load();
    while (!now_.compare_exchange_weak(now, now + seconds)) {
    }
  }

 private:
  std::atomic<double> now_{0.0};
};

}  // namespace perftune::testing
