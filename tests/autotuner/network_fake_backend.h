#pragma once
// Test fake for network tuning: scripted times (a config's knob values set its time), every config
// of the kernels in `crashing` fails, and a campaign over tests/fixtures/networks/dense_stack.json
// (four kernels, two distinct) run on it.
#include <memory>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "autotuner/network/network_tuner.h"
#include "hardware/backend.h"
#include "test_support.h"

namespace perftune::testing {

inline const std::string kDenseStack = "tests/fixtures/networks/dense_stack.json";

class NetworkFakeBackend : public Backend {
 public:
  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace&, std::span<const Config> configs) override {
    std::vector<MeasureResult> results;
    for (const Config& config : configs) {
      measured.insert({kernel.key(), config.to_string()});
      if (crashing.count(kernel.key())) {
        results.push_back(MeasureResult::failure(MeasureStatus::kRuntimeError, "scripted crash", 0.1));
        continue;
      }
      double seconds = 1e-3;
      for (std::int64_t v : config.values) seconds += 1e-6 * static_cast<double>(v % 7);
      results.push_back(MeasureResult::from_repeats({seconds}, 0.1));
    }
    return results;
  }
  std::string fingerprint() const override { return "fake:network"; }

  std::set<std::string> crashing;
  std::set<std::pair<std::string, std::string>> measured;
};

inline Campaign dense_stack_campaign(std::size_t measurements, const std::string& output, const std::string& allocation = "gradient",
                                    const std::string& network = kDenseStack) {
  const nlohmann::json json = {{"source", {{"network", source_path(network)}}},
                               {"backend", {{"type", "cpu"}}},
                               {"model", {{"type", "none"}}},
                               {"strategy", {{"type", "random"}}},
                               {"budget", {{"measurements", measurements}}},
                               {"allocation", allocation},
                               {"top_k", 3},
                               {"seed", 5},
                               {"output", output}};
  return parse_campaign(json, "network_campaign.json");
}

// Runs the campaign on `fake` (the campaign's own device backend is built, then set aside).
inline nlohmann::ordered_json tune_on(const Campaign& campaign, NetworkFakeBackend& fake) {
  struct Borrowed : Backend {
    explicit Borrowed(Backend& inner) : inner(inner) {}
    std::vector<MeasureResult> measure(const Kernel& k, const SearchSpace& s, std::span<const Config> c) override { return inner.measure(k, s, c); }
    std::string fingerprint() const override { return inner.fingerprint(); }
    Backend& inner;
  };
  NetworkTuneOptions options;
  options.wrap_device = [&fake](std::unique_ptr<Backend>) -> std::unique_ptr<Backend> { return std::make_unique<Borrowed>(fake); };
  return tune_network(campaign, options);
}

}  // namespace perftune::testing
