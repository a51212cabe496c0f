// Re-measuring in rounds: each round a fresh backend, logged and resumed with nothing measured
// twice; a config's runtime over its rounds is their lower median.
#include "offline/measurement_rounds.h"

#include <filesystem>
#include <map>

#include "hardware/hardware_test_support.h"
#include "ir/record_log.h"

namespace perftune {
namespace {

Config at(std::int64_t a) { return Config{{a, 1}}; }

MeasureResult ok(double seconds) { return MeasureResult::from_repeats({seconds}, 0.1); }

// Every measurement of config a is 1 + a ms, plus a trace of its count (as a noisy device).
class CountingBackend : public Backend {
 public:
  explicit CountingBackend(std::map<std::int64_t, int>& counts) : counts_(counts) {}
  std::vector<MeasureResult> measure(const Kernel&, const SearchSpace&, std::span<const Config> configs) override {
    std::vector<MeasureResult> out;
    for (const Config& c : configs) {
      const int n = ++counts_[c.values[0]];
      out.push_back(ok(1e-3 * static_cast<double>(1 + c.values[0]) + 1e-6 * n));
    }
    return out;
  }
  std::string fingerprint() const override { return "cpu:test"; }

 private:
  std::map<std::int64_t, int>& counts_;
};

TEST_CASE("re-measuring rounds are logged, stopped between batches, resumed, and never measure a config twice in a round") {
  const std::string dir = scratch_dir("remeasure_rounds");
  const SearchSpace space({{"a", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}}, {"b", {1, 2}}});
  std::vector<Config> configs;
  for (std::int64_t a = 0; a < 20; ++a) configs.push_back(at(a));
  std::map<std::int64_t, int> counts;
  int backends = 0;
  const BackendMaker make = [&] {
    ++backends;
    return std::make_unique<CountingBackend>(counts);
  };
    // Stopped once round 2 has measured its first batch (16 configs): round 1 whole, round 2 in part.
  int batches = 0;
  const Remeasured cut = remeasure(tiny_add_kernel(), space, configs, 3, dir, make, [&] { return ++batches > 3; }, nullptr);
  REQUIRE_FALSE(cut.complete);
  std::size_t measured = 0;
  for (const auto& rounds : cut.rounds) measured += rounds.size();
  REQUIRE(measured == 20);  // round 1; round 2's first batch is in its log, not measured again below
  REQUIRE(RecordLog::load(dir + "/round_2.jsonl").records.size() == 16);
  REQUIRE(backends == 2);  // a fresh backend per round

  const Remeasured rest = remeasure(tiny_add_kernel(), space, configs, 3, dir, make, nullptr, nullptr);
  REQUIRE(rest.complete);
  for (std::int64_t a = 0; a < 20; ++a) {
    CAPTURE(a);
    REQUIRE(counts[a] == 3);  // nothing measured twice, nothing left out
    REQUIRE(rest.rounds[static_cast<std::size_t>(a)].size() == 3);
    REQUIRE(remeasured_seconds(rest.rounds[static_cast<std::size_t>(a)]).value() == Approx(1e-3 * static_cast<double>(1 + a) + 2e-6));
  }
  REQUIRE(std::filesystem::exists(dir + "/round_3.jsonl"));
  // Everything is in the logs now: a third call measures nothing.
  const Remeasured again = remeasure(tiny_add_kernel(), space, configs, 3, dir, make, nullptr, nullptr);
  REQUIRE(again.complete);
  REQUIRE(counts[0] == 3);
}

TEST_CASE("a config's re-measured runtime is the lower median of its rounds, a failure slower than any time") {
  const MeasureResult failed = MeasureResult::failure(MeasureStatus::kTimeout, "hung");
  REQUIRE(remeasured_seconds({ok(3.0), ok(1.0), ok(2.0)}).value() == 2.0);
  REQUIRE(remeasured_seconds({ok(1.0), failed}).value() == 1.0);
  REQUIRE_FALSE(remeasured_seconds({failed, ok(1.0), failed}).has_value());
  REQUIRE_FALSE(remeasured_seconds({}).has_value());
}

}  // namespace
}  // namespace perftune
