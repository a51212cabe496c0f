// search_bench: how many configs per second simulated annealing and evolutionary search score
// with a cheap cost model, i.e. the search's own overhead (mutation, validity checks, de-dup,
// TBB scheduling) that a learned model's predict() time adds to. Not part of ctest.
//
//   build/bench/search_bench [--rounds N] [--knobs K]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <tbb/info.h>

#include "search/evolutionary_search.h"
#include "search/simulated_annealing.h"

namespace perftune {
namespace {

// A cheap, smooth model over power-of-two knobs: the log runtime grows with each knob's log2
// distance from a fixed optimum, plus an interaction term so the landscape is not separable.
class CheapModel : public CostModel {
 public:
  explicit CheapModel(Config optimum) : optimum_(std::move(optimum)) {}
  std::string name() const override { return "cheap"; }
  void predict(const Kernel&, const SearchSpace&, std::span<const Config> configs, std::span<float> out) override {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < configs.size(); ++i) {
      double score = 0.0, product = 0.0;
      for (std::size_t k = 0; k < configs[i].values.size(); ++k) {
        const double d = std::log2(static_cast<double>(configs[i].values[k])) - std::log2(static_cast<double>(optimum_.values[k]));
        score += std::abs(d);
        product += d;
      }
      out[i] = static_cast<float>(0.3 * score + 0.05 * product * product);
    }
    scored += configs.size();
    ++calls;
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  std::size_t scored = 0, calls = 0;
  double seconds = 0.0;

 private:
  Config optimum_;
};

struct Figures {
  double wall = 0.0;
  std::size_t scored = 0, calls = 0;
  double model_seconds = 0.0;
  bool found = false;
};

Figures run(Strategy& strategy, const SearchSpace& space, const Config& optimum, std::size_t rounds) {
  CheapModel model(optimum);
  const Kernel kernel = Kernel::opaque("bench", "00000000000000be");
  History history;
  Figures figures;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t round = 0; round < rounds; ++round) {
    const auto proposed = strategy.propose(SearchContext{kernel, space, &model, history, 1, round}, 64);
    if (proposed.size() != 64) {
      std::string message = strategy.name();
      message.append(" proposed ").append(std::to_string(proposed.size())).append(" configs, not 64");
      throw std::runtime_error(message);
    }
    if (round == 0) figures.found = proposed.front() == optimum;
    // Measure the proposals (a stand-in runtime) so later rounds must search past them.
    for (const Config& config : proposed) history.add(config, MeasureResult::from_repeats({1.0}, 0.0));
  }
  figures.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  figures.scored = model.scored;
  figures.calls = model.calls;
  figures.model_seconds = model.seconds;
  return figures;
}

void report(const std::string& name, const Figures& f, std::size_t rounds) {
  std::printf("%-10s rounds %zu  scored %zu configs in %zu predict() calls  wall %.3f s  -> %.0f configs/s "
              "(model %.1f%% of wall); round-0 top pick is the optimum: %s\n",
              name.c_str(), rounds, f.scored, f.calls, f.wall, static_cast<double>(f.scored) / f.wall,
              100.0 * f.model_seconds / f.wall, f.found ? "yes" : "NO");
}

}  // namespace
}  // namespace perftune

int main(int argc, char** argv) {
  using namespace perftune;
  std::size_t rounds = 5, knob_count = 6;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--knobs")) knob_count = std::strtoul(argv[i + 1], nullptr, 10);
  }
  // Six power-of-two knobs 1..512 (10^6 configs), with a bound on the product of the first two
  // (a shared-memory-like limit) so validity checks do real work.
  std::vector<Knob> knobs;
  std::vector<std::int64_t> powers;
  for (int p = 0; p < 10; ++p) powers.push_back(std::int64_t{1} << p);
  for (std::size_t k = 0; k < knob_count; ++k) knobs.push_back({std::string("k").append(std::to_string(k)), powers});
  const SearchSpace space(knobs, [](const Config& c) { return c.values[0] * c.values[1] <= 16384; });
  Config optimum;
  for (std::size_t k = 0; k < knob_count; ++k) optimum.values.push_back(std::int64_t{1} << ((3 + 2 * k) % 10));
  std::printf("space: %zu knobs of 10 values (%llu configs before the constraint); TBB threads: %d\n", knob_count,
              static_cast<unsigned long long>(space.domain_product()), tbb::info::default_concurrency());

  SimulatedAnnealing annealing;  // defaults: 128 chains, up to 500 steps
  report("annealing", run(annealing, space, optimum, rounds), rounds);
  EvolutionarySearch evolution;  // defaults: population 2048, 4 generations
  report("evolution", run(evolution, space, optimum, rounds), rounds);
  return 0;
}
