// search_bench: how many configs per second simulated annealing and evolutionary search score
// with a cheap cost model, i.e. the search's own overhead (mutation, validity checks, de-dup,
// TBB scheduling) that a learned model's predict() time adds to. Then the same on a program's
// fusion space with the analytical model, where a tuning round's search cost is what the CPU
// fusion campaign pays outside the hardware: the cost of one legality check and one analytical
// score, and rounds of annealing / evolution with and without the score cache. Not part of ctest.
//
//   build/bench/search_bench [--rounds N] [--knobs K] [--program configs/programs/X.json]
//                            [--spec configs/hardware/host.json]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include <tbb/info.h>

#include "hardware/halide/fusion_space.h"
#include "ir/device_spec.h"
#include "ir/program_json.h"
#include "search/cached_cost_model.h"
#include "search/evolutionary_search.h"
#include "search/simulated_annealing.h"
#include "surrogate/analytical/analytical_model.h"

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

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Rounds of `strategy` on a fusion space, as the tuner runs them: 8 proposals a round measured
// (a stand-in runtime), the model's update() between rounds. Prints the seconds per round.
void fusion_rounds(const std::string& label, Strategy& strategy, CostModel& model, const Kernel& kernel,
                   const SearchSpace& space, std::size_t rounds) {
  History history;
  std::printf("%-34s", label.c_str());
  double total = 0.0;
  for (std::size_t round = 0; round < rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    const auto proposed = strategy.propose(SearchContext{kernel, space, &model, history, 1, round}, 8);
    std::vector<Measurement> fresh;
    for (const Config& config : proposed) {
      history.add(config, MeasureResult::from_repeats({1.0}, 0.0));
      fresh.push_back(Measurement{config, MeasureResult::from_repeats({1.0}, 0.0)});
    }
    model.update(kernel, space, fresh);
    const double seconds = seconds_since(start);
    total += seconds;
    std::printf(" %6.3f", seconds);
  }
  std::printf("  | mean %.3f s/round\n", total / static_cast<double>(rounds));
}

void fusion_bench(const std::string& program_path, const std::string& spec_path, std::size_t rounds) {
  const Program program = load_program_file(program_path);
  const Kernel kernel(program.name(), program);
  const SearchSpace space = fusion_space(program);
  AnalyticalModel model(load_device_spec(spec_path));
  std::printf("\nfusion space of %s: %zu fuse.<e> knobs; analytical model over %s\n", program.name().c_str(),
              space.dimension(), spec_path.c_str());

  // One legality check (SearchSpace::contains) on domain points, one analytical score per config.
  Rng rng(7);
  std::vector<Config> points(20'000);
  for (Config& config : points)
    for (const Knob& knob : space.knobs()) config.values.push_back(knob.values[uniform_index(rng, knob.values.size())]);
  auto start = std::chrono::steady_clock::now();
  std::size_t legal = 0;
  for (const Config& config : points) legal += space.contains(config) ? 1 : 0;
  const double contains_us = 1e6 * seconds_since(start) / static_cast<double>(points.size());
  std::vector<Config> valid;
  for (int i = 0; i < 2048; ++i) valid.push_back(space.sample(rng));
  std::vector<float> scores(valid.size());
  start = std::chrono::steady_clock::now();
  model.predict(kernel, space, valid, scores);
  const double predict_us = 1e6 * seconds_since(start) / static_cast<double>(valid.size());
  std::printf("legality check %.2f us per config (%.1f%% of domain points legal); analytical score %.1f us per config\n",
              contains_us, 100.0 * static_cast<double>(legal) / static_cast<double>(points.size()), predict_us);

  std::printf("seconds per round (%zu rounds of 8 proposals):\n", rounds);
  EvolutionOptions evolution_options;  // configs/campaigns/cpu_transformer_fusion.json's settings
  evolution_options.population = 512;
  for (bool cached : {false, true}) {
    CachedCostModel cache(model, CachedCostModelOptions{.inner_learns = false});
    CostModel& scorer = cached ? static_cast<CostModel&>(cache) : model;
    const std::string suffix = cached ? " + score cache" : "";
    EvolutionarySearch evolution(evolution_options);
    fusion_rounds("evolution (512 x 4)" + suffix, evolution, scorer, kernel, space, rounds);
    SimulatedAnnealing annealing;
    fusion_rounds("annealing (128 chains x 500)" + suffix, annealing, scorer, kernel, space, rounds);
    if (cached)
      std::printf("score cache: %zu hits, %zu misses\n", cache.hits(), cache.misses());
  }
}

}  // namespace
}  // namespace perftune

int main(int argc, char** argv) {
  using namespace perftune;
  std::size_t rounds = 5, knob_count = 6;
  std::string program = "configs/programs/transformer_block_small.json", spec = "configs/hardware/host.json";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--knobs")) knob_count = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--program")) program = argv[i + 1];
    else if (!std::strcmp(argv[i], "--spec")) spec = argv[i + 1];
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
  fusion_bench(program, spec, rounds);
  return 0;
}
