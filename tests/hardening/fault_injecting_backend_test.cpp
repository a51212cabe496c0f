// The FaultInjectingBackend: each fault kind gives the result a real failure of that kind gives,
// the faulted share follows the plan, draws are reproducible per (seed, config, attempt), and a
// hang is bounded.
#include <chrono>
#include <memory>

#include <catch2/catch.hpp>

#include "autotuner/scripted_backend.h"
#include "hardening/toy_recording.h"
#include "hardware/wrappers/fault_injecting_backend.h"

namespace perftune {
namespace {

struct Rig {
  testing::ScriptedBackend* scripted;
  std::unique_ptr<FaultInjectingBackend> backend;
};

Rig rig(FaultPlan plan) {
  auto scripted = std::make_unique<testing::ScriptedBackend>([](const Config& c) { return testing::toy_seconds(c, testing::kToyTarget); }, 0.5);
  testing::ScriptedBackend* raw = scripted.get();
  return Rig{raw, std::make_unique<FaultInjectingBackend>(std::move(scripted), std::move(plan))};
}

TEST_CASE("each fault kind gives the result its real counterpart gives") {
  const SearchSpace space = testing::tile_space(4);
  const Kernel kernel = testing::toy_kernel();
  const Config config{{2, 4, 8}};
  const double truth = testing::toy_seconds(config, testing::kToyTarget);
  const FaultKind kind = GENERATE(from_range(all_fault_kinds()));
  CAPTURE(fault_kind_name(kind));
  Rig r = rig(FaultPlan{1.0, {kind}, 7, 0.02, 0.0});
  const auto start = std::chrono::steady_clock::now();
  const std::vector<MeasureResult> results = r.backend->measure(kernel, space, std::vector<Config>{config});
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(results.size() == 1);
  const MeasureResult& result = results[0];
  const bool reaches_device = kind == FaultKind::kNaN || kind == FaultKind::kNegative || kind == FaultKind::kOff100x;
  CHECK(r.scripted->times_measured[config] == (reaches_device ? 1 : 0));
  CHECK(r.backend->injected(kind) == 1);
  CHECK(r.backend->injected_total() == 1);
  switch (kind) {
    case FaultKind::kCompileError: CHECK(result.status == MeasureStatus::kCompileError); break;
    case FaultKind::kHang:
      CHECK(result.status == MeasureStatus::kTimeout);
      CHECK(result.cost_seconds == 0.02);
      CHECK(wall >= 0.02);
      CHECK(wall < 1.0);  // bounded
      break;
    case FaultKind::kCrash:
      CHECK(result.status == MeasureStatus::kRuntimeError);
      CHECK_THAT(result.message, Catch::Contains("killed by signal 11"));
      break;
    case FaultKind::kNaN: CHECK((result.ok() && std::isnan(result.seconds))); break;
    case FaultKind::kNegative: CHECK((result.ok() && result.seconds == -truth)); break;
    case FaultKind::kOff100x:
      CHECK(result.ok());
      CHECK(result.seconds == Approx(truth / 100).epsilon(1e-12));
      CHECK(result.repeats.front() == Approx(truth / 100).epsilon(1e-12));
      break;
  }
}

TEST_CASE("the faulted share follows the plan and the draws are reproducible") {
  const SearchSpace space = testing::tile_space(8);
  const Kernel kernel = testing::toy_kernel();
  const std::vector<Config> configs = space.enumerate();  // 512
  const double share = GENERATE(0.0, 0.1, 0.3, 1.0);
  const std::uint64_t seed = GENERATE(1u, 2u);
  CAPTURE(share, seed);
  Rig a = rig(FaultPlan{share, {}, seed, 0.0, 0.0});
  Rig b = rig(FaultPlan{share, {}, seed, 0.0, 0.0});
  const auto first = a.backend->measure(kernel, space, configs);
  // The same configs in reverse order meet the same faults: draws depend on the config, not the batch.
  std::vector<Config> reversed(configs.rbegin(), configs.rend());
  auto second = b.backend->measure(kernel, space, reversed);
  std::reverse(second.begin(), second.end());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(i);
    REQUIRE(first[i].status == second[i].status);
    if (first[i].ok()) REQUIRE((first[i].seconds == second[i].seconds || (std::isnan(first[i].seconds) && std::isnan(second[i].seconds))));
  }
  const double observed = static_cast<double>(a.backend->injected_total()) / static_cast<double>(configs.size());
  // 512 Bernoulli draws: 4 standard deviations of sqrt(p(1-p)/512) is below 0.09.
  CHECK(observed == Approx(share).margin(0.09));
  if (share >= 0.3)
    for (FaultKind kind : all_fault_kinds()) CHECK(a.backend->injected(kind) > 0);
  CHECK(a.backend->measurements() == configs.size());

  // A second attempt at a config is a fresh draw: not every faulted config fails again.
  if (share > 0 && share < 1) {
    const auto again = a.backend->measure(kernel, space, configs);
    std::size_t changed = 0;
    for (std::size_t i = 0; i < configs.size(); ++i) changed += again[i].status != first[i].status;
    CHECK(changed > 0);
  }
}

TEST_CASE("an impossible fault plan is refused") {
  auto make = [](FaultPlan plan) {
    return FaultInjectingBackend(std::make_unique<testing::ScriptedBackend>([](const Config&) { return 1.0; }), std::move(plan));
  };
  CHECK_THROWS_AS(make(FaultPlan{1.5, {}, 0, 0.0, 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(make(FaultPlan{-0.1, {}, 0, 0.0, 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(make(FaultPlan{0.1, {}, 0, kMaxHangSeconds + 1, 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(make(FaultPlan{0.1, {}, 0, 0.0, -1.0}), std::invalid_argument);
  const FaultInjectingBackend ok = make(FaultPlan{0.2, {FaultKind::kHang}, 3, 0.0, 0.0});
  CHECK(ok.fingerprint() == "scripted:test+faults(share=0.2,seed=3,kinds=hang)");
  CHECK(parse_fault_kind("off_100x") == FaultKind::kOff100x);
  CHECK_FALSE(parse_fault_kind("meltdown"));
}

}  // namespace
}  // namespace perftune
