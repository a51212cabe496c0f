#pragma once
// Where measurements come from: recorded runs (replay), real runs on this CPU, or a user's
// runner on an accelerator. A batch is a set of configs of one kernel; a whole program under
// fusion decisions is a kernel too (its body is the program, its knobs include the fusion flags).
#include <span>
#include <string>
#include <vector>

#include "ir/kernel.h"
#include "ir/measurement.h"
#include "ir/search_space.h"

namespace perftune {

// A kernel scheduled by a tool the backend's platform ships (a compiler's autoscheduler, a vendor
// library): a reference a tuned config should beat, measured on the same device.
struct PeerMeasurement {
  enum class Kind { kScheduler, kLibrary };  // the platform's own scheduler, or a library call
  std::string name;      // "Adams2019", "openblas"
  std::string settings;  // how it was run ("machine 16,16777216,40 (Halide's generic)", "2 threads")
  MeasureResult result;
  Kind kind = Kind::kScheduler;
};

// "scheduler" or "library", as summaries write a peer's kind.
inline const char* peer_kind_name(PeerMeasurement::Kind kind) {
  return kind == PeerMeasurement::Kind::kLibrary ? "library" : "scheduler";
}

class Backend {
 public:
  virtual ~Backend() = default;
  // One result per config, in order. A failed measurement is a result with its status, never an
  // exception; exceptions are for a backend that cannot work at all (e.g. no compiler).
  virtual std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                             std::span<const Config> configs) = 0;
  // Device and version, stored in every record ("cpu:AMD EPYC ...:g++12", "replay:TITAN_RTX").
  virtual std::string fingerprint() const = 0;
  // The platform's own tools on this kernel, each at its best settings; none by default.
  virtual std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) { return {}; }
};

}  // namespace perftune
