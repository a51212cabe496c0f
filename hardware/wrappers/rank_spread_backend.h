#pragma once
// Measurement on many hosts: under `mpirun -n N`, rank 0 runs the campaign or the collector with a
// RankSpreadBackend, and every other rank owns one device (its own backend, e.g. the Halide CPU
// backend of its host, or a command backend's runner on a TPU host) and serves measurements. A
// batch is cut into N contiguous shares, one per rank (rank 0 measures the first itself); the
// results come back in batch order, so the record log, resume and the budget are what one process
// would have written. Requests and replies are the runner protocol (runner_protocol.h) sent as
// messages between ranks (distributed/ranks.h).
#include <memory>

#include "distributed/ranks.h"
#include "hardware/backend.h"

namespace perftune {

class RankSpreadBackend : public Backend {
 public:
  // Asks every other rank for its device's fingerprint: throws std::runtime_error naming the rank
  // whose device differs from `local`'s (records name one device; a mixed fleet would mix them).
  RankSpreadBackend(std::unique_ptr<Backend> local, Ranks& ranks);

  // Configs outside `space` fail here as invalid_config (the serving ranks see the knobs' values,
  // not the space's constraint); the rest are spread.
  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space,
                                     std::span<const Config> configs) override;
  std::string fingerprint() const override { return local_->fingerprint(); }
  // Peers are measured on rank 0's device alone (once per kernel, not per batch).
  std::vector<PeerMeasurement> measure_peers(const Kernel& kernel) override { return local_->measure_peers(kernel); }

 private:
  std::unique_ptr<Backend> local_;
  Ranks& ranks_;
};

// A serving rank (rank > 0): measures what rank 0 sends on `backend` until rank 0 calls
// stop_serving(). A backend that throws, or a request that cannot be read, fails that share as
// runtime_error results naming the rank and why, so it shows in the log instead of ending the launch.
void serve_measurements(Backend& backend, Ranks& ranks);
// Rank 0, when its work is done: ends every serving rank's loop.
void stop_serving(Ranks& ranks);

}  // namespace perftune
