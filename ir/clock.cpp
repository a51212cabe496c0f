#include "ir/clock.h"

#include <chrono>

namespace perftune {

namespace {

class SteadyClock : public Clock {
 public:
  double now_seconds() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

}  // namespace

const Clock& steady_clock() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace perftune
