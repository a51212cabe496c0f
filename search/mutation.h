#pragma once
// Moves over a SearchSpace shared by every strategy: weighted mutation rules and crossover. All
// go through SearchSpace::contains, so constrained, recorded and fusion spaces need no special
// code (a fuse.<e> flip that makes an illegal partition is simply rejected).
#include <optional>

#include "ir/random.h"
#include "ir/search_space.h"

namespace perftune {

// Relative weights of the mutation rules (normalized when drawn). The rule set follows Ansor's
// weighted mutation rules (Zheng et al., OSDI 2020, sec. 5.2); the weights are ours: mostly
// one-knob moves, which keep a good parent's other choices, with some longer jumps.
struct MutationWeights {
  double random_value = 0.5;    // one knob to a different random value of its domain
  double neighbour_step = 0.3;  // one knob one step up or down its (sorted) domain
  double several_knobs = 0.2;   // 2..kSeveralKnobsMax knobs to random values
};

inline constexpr std::size_t kSeveralKnobsMax = 4;

// A valid config that differs from `parent`, or nullopt if `attempts` draws all left the space
// (or no knob has a second value).
std::optional<Config> mutate(const SearchSpace& space, const Config& parent, const MutationWeights& weights,
                             Rng& rng, int attempts = 16);

// A valid child taking each knob from `a` or `b` with equal probability (uniform crossover),
// different from both parents; nullopt after `attempts` invalid or unchanged draws.
std::optional<Config> crossover(const SearchSpace& space, const Config& a, const Config& b, Rng& rng,
                                int attempts = 8);

}  // namespace perftune
