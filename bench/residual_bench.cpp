// residual_bench: what the GP residual (surrogate/transfer/target_residual.h) costs per tuning round, as
// gpu_transfer runs it: three frozen priors, rounds of 10 measurements up to 200, on a 10-knob
// space shaped like Kernel Tuner's convolution (16 x 5 x 4 x 4 x 2 x 2 x 2 x 2). Per round: one
// update() (the refit: the length-scale x noise grid, and with relevances two sweeps of
// per-knob factors), one predict() of 18k configs (a search's scoring volume), and one batch
// choice (search/batch_policy.h) by batch Thompson sampling with the incumbent's one-knob changes
// and 2 local slots. Cheap closed-form priors stand in for the GNNs, so the figures are the residual's own.
// Not part of ctest.
//
//   build/bench/residual_bench [--budget N] [--predict N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/random.h"
#include "search/batch_policy.h"
#include "surrogate/transfer/target_residual.h"

namespace perftune {
namespace {

// A smooth log-runtime landscape with its optimum at `centre` (knob-index units) and per-knob
// weights, so some knobs matter more than others (what the relevances are for).
class BowlModel : public CostModel {
 public:
  BowlModel(std::vector<double> centre, std::vector<double> weight) : centre_(std::move(centre)), weight_(std::move(weight)) {}
  std::string name() const override { return "bowl"; }
  void predict(const Kernel&, const SearchSpace& space, std::span<const Config> configs, std::span<float> out) override {
    for (std::size_t i = 0; i < configs.size(); ++i) out[i] = static_cast<float>(value(space, configs[i]));
  }
  void update(const Kernel&, const SearchSpace&, std::span<const Measurement>) override {}
  double value(const SearchSpace& space, const Config& config) const {
    double sum = std::log(1e-3);
    for (std::size_t k = 0; k < config.values.size(); ++k) {
      const double d = static_cast<double>(space.index_of(k, config.values[k])) - centre_[k];
      sum += weight_[k] * d * d;
    }
    return sum;
  }

 private:
  std::vector<double> centre_, weight_;
};

SearchSpace convolution_like() {
  std::vector<Knob> knobs;
  auto range = [](std::int64_t n) {
    std::vector<std::int64_t> values;
    for (std::int64_t v = 0; v < n; ++v) values.push_back(v);
    return values;
  };
  const std::int64_t sizes[] = {16, 5, 4, 4, 2, 2, 2, 2};
  for (std::size_t k = 0; k < 8; ++k) knobs.push_back({std::string("k").append(std::to_string(k)), range(sizes[k])});
  return SearchSpace(knobs);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void run(const char* label, const TargetResidualOptions& options, std::size_t budget, std::size_t predict_count) {
  const SearchSpace space = convolution_like();
  const Kernel kernel = Kernel::opaque("bench", "00000000000000bf");
  const std::vector<double> weights = {0.02, 0.3, 0.1, 0.1, 0.5, 0.01, 0.2, 0.01};
  const BowlModel target({9, 1, 2, 3, 1, 0, 1, 1}, weights);
  std::vector<std::unique_ptr<CostModel>> priors;
  priors.push_back(std::make_unique<BowlModel>(std::vector<double>{7, 0, 1, 3, 0, 0, 0, 1}, weights));
  priors.push_back(std::make_unique<BowlModel>(std::vector<double>{12, 1, 2, 2, 1, 0, 1, 0}, weights));
  priors.push_back(std::make_unique<BowlModel>(std::vector<double>{3, 4, 0, 0, 1, 1, 0, 0}, weights));
  TargetResidualModel model(std::move(priors), options);
  const BatchPolicy policy({.batch = BatchChoice::kThompson, .source_favourites = 10, .incumbent_neighbours = 1, .local_slots = 2});

  Rng rng(5);
  std::vector<Config> scored;
  for (std::size_t i = 0; i < predict_count; ++i) scored.push_back(space.sample(rng));
  std::vector<float> out(scored.size());
  std::unordered_set<Config, ConfigHash> measured;
  auto taken = [&](const Config& c) { return measured.count(c) > 0; };
  std::printf("%s\n  %8s %10s %12s %14s\n", label, "points", "update s", "predict s", "choose s");
  double total = 0.0;
  for (std::size_t round = 0; measured.size() < budget; ++round) {
    auto start = std::chrono::steady_clock::now();
    model.predict(kernel, space, scored, out);
    const double predict_seconds = seconds_since(start);
    std::vector<Config> ranked;  // the 100 best of the scored sample, as a search's proposals
    std::vector<std::size_t> order(scored.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const std::size_t head = std::min<std::size_t>(200, order.size());  // --predict may ask for fewer
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(head), order.end(),
                      [&](std::size_t a, std::size_t b) { return out[a] < out[b]; });
    for (std::size_t i = 0; i < head && ranked.size() < 100; ++i)
      if (!taken(scored[order[i]])) ranked.push_back(scored[order[i]]);
    start = std::chrono::steady_clock::now();
    const std::vector<Config> chosen = policy.choose(&model, kernel, space, ranked, 10, 1, round, taken);
    const double choose_seconds = seconds_since(start);
    std::vector<Measurement> fresh;
    for (const Config& config : chosen) {
      if (fresh.size() == 10 || taken(config)) continue;
      measured.insert(config);
      fresh.push_back(Measurement{config, MeasureResult::from_repeats({std::exp(target.value(space, config))}, 0.0)});
    }
    start = std::chrono::steady_clock::now();
    model.update(kernel, space, fresh);
    const double update_seconds = seconds_since(start);
    total += predict_seconds + choose_seconds + update_seconds;
    if (measured.size() % 50 == 0 || measured.size() <= 10)
      std::printf("  %8zu %10.4f %12.4f %14.4f\n", measured.size(), update_seconds, predict_seconds, choose_seconds);
  }
  const auto fit = model.fit(kernel);
  std::printf("  total %.2f s for %zu points; final fit: length %.2f, noise share %.3f, relevances", total, measured.size(),
              fit ? fit->length_scale : 0.0, fit ? fit->noise_share : 0.0);
  if (fit)
    for (const double r : fit->relevance) std::printf(" %.2f", r);
  std::printf("\n");
}

}  // namespace
}  // namespace perftune

int main(int argc, char** argv) {
  using namespace perftune;
  std::size_t budget = 200, predict_count = 18'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--budget")) budget = std::strtoul(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--predict")) predict_count = std::strtoul(argv[i + 1], nullptr, 10);
  }
  TargetResidualOptions options{.exploration = 1.0, .sample_residual = true};
  run("Thompson batch + local slots, one length scale", options, budget, predict_count);
  options.relevance = true;
  run("Thompson batch + local slots, relevance per knob (gpu_transfer's residual)", options, budget, predict_count);
  return 0;
}
