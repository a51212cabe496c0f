#pragma once
// A peer at equal budget: Adams2019's own autotuning mode, as its authors run it
// (Halide's src/autoschedulers/adams2019/autotune_loop.sh): sample 0 of each batch is its
// best-effort beam search (HL_BEAM_SIZE 32, HL_RANDOM_DROPOUT 100: no randomness), every other
// sample a random probe biased by its cost model (beam 1, dropout 1: a 1% chance of a wholly
// greedy search) with a new HL_SEED; each sample searched in a fresh process, as the loop runs a
// generator per sample, then compiled, checked and timed once on the same backend. What the loop
// does not do here: retrain the cost model between batches (Debian's package ships the plugin,
// not the retraining tool), so a later batch's beam search would find batch 0's schedule again:
// its measurement is reused (and charged again) instead of searching again.
//   "strategy": {"type": "autoscheduler_sampling", "autoscheduler": "Adams2019", "batch": 32,
//                "beam_size": 1, "dropout": 1, "first_beam_size": 32, "machine": "16,16777216,40"}
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hardware/halide/halide_backend.h"
#include "ir/json_view.h"

namespace perftune {

struct AutoschedulerSamplingOptions {
  std::string autoscheduler = "Adams2019";
  std::size_t batch = 32;            // samples per batch; the first of each is the beam search
  int beam_size = 1;                 // the random probes'
  int dropout = 1;                   // the probes' chance, in percent, of a wholly greedy search
  int first_beam_size = 32;          // the batch's beam search
  std::string machine = kGenericMachineParams;  // the settings Adams2019 does best with here (peers)
};

// Throws InputError naming the JSON path of an unknown key or a bad value.
AutoschedulerSamplingOptions parse_autoscheduler_sampling(const JsonView& view);

// The environment of sample `index` (0-based) of a run with `seed`.
AutoschedulerRun autoscheduler_sample(const AutoschedulerSamplingOptions& options, std::uint64_t seed, std::size_t index);

// Measures `budget` samples in order; `done` is called after each.
std::vector<AutoscheduledMeasurement> sample_autoscheduler(
    HalideBackend& backend, const Kernel& kernel, const AutoschedulerSamplingOptions& options, std::uint64_t seed,
    std::size_t budget, const std::function<void(std::size_t, const AutoscheduledMeasurement&)>& done = {});

}  // namespace perftune
