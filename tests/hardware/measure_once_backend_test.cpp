// A live experiment's runs share one memo: a config measured by one run is read by the next
// (same figures, cost charged, nothing measured), a run asking for a config again measures it,
// transient failures are measured again, and a memo survives the process (read back from disk),
// its figures served again only when the experiment asks for every sitting's.
#include "hardware/wrappers/measure_once_backend.h"

#include <filesystem>
#include <fstream>

#include "hardware_test_support.h"

namespace perftune {
namespace {

SearchSpace knob_space() { return SearchSpace({{"a", {0, 1, 2, 3, 4, 5}}, {"b", {1, 2}}}); }

// A noisy device: each measurement of a config differs (a counter), a = 5 times out, a = 4 fails to compile.
class CountingBackend : public Backend {
 public:
  std::vector<MeasureResult> measure(const Kernel&, const SearchSpace&, std::span<const Config> configs) override {
    std::vector<MeasureResult> out;
    for (const Config& c : configs) {
      ++measured;
      if (c.values[0] == 5) out.push_back(MeasureResult::failure(MeasureStatus::kTimeout, "hung", 2.0));
      else if (c.values[0] == 4) out.push_back(MeasureResult::failure(MeasureStatus::kCompileError, "rejected", 0.5));
      else out.push_back(MeasureResult::from_repeats({1e-3 * static_cast<double>(1 + c.values[0]) + 1e-6 * static_cast<double>(measured)}, 0.25));
    }
    return out;
  }
  std::string fingerprint() const override { return "cpu:test"; }
  int measured = 0;
};

std::vector<Config> configs(std::initializer_list<std::int64_t> as) {
  std::vector<Config> out;
  for (std::int64_t a : as) out.push_back(Config{{a, 1}});
  return out;
}

TEST_CASE("runs sharing a measurement memo measure each config once", "[hardware]") {
  const std::string path = scratch_dir("measure_once_memo") + "/memo.jsonl";
  MeasurementMemo memo(path);
  const SearchSpace space = knob_space();

  auto first_device = std::make_unique<CountingBackend>();
  CountingBackend& first_counts = *first_device;
  MeasureOnceBackend first(std::move(first_device), memo);
  const auto batch = configs({0, 1, 4, 5});
  const std::vector<MeasureResult> firsts = first.measure(tiny_add_kernel(), space, batch);
  REQUIRE(first_counts.measured == 4);
  REQUIRE(memo.size() == 3);  // the timeout is not kept

  auto second_device = std::make_unique<CountingBackend>();
  CountingBackend& second_counts = *second_device;
  MeasureOnceBackend second(std::move(second_device), memo);
  const std::vector<MeasureResult> seconds = second.measure(tiny_add_kernel(), space, configs({1, 0, 2, 4, 5}));
  // 1, 0 and 4 come from the memo, with the first run's figures and costs; 2 and 5 are measured.
  REQUIRE(second_counts.measured == 2);
  REQUIRE(second.reused() == 3);
  REQUIRE(seconds[0].seconds == firsts[1].seconds);
  REQUIRE(seconds[1].seconds == firsts[0].seconds);
  REQUIRE(seconds[1].cost_seconds == 0.25);
  REQUIRE(seconds[3].status == MeasureStatus::kCompileError);
  REQUIRE(seconds[4].status == MeasureStatus::kTimeout);

  // A config the same run asks for again (a confirmation) is measured for real, and the memo
  // keeps its first figure.
  const std::vector<MeasureResult> again = second.measure(tiny_add_kernel(), space, configs({0}));
  REQUIRE(second_counts.measured == 3);
  REQUIRE(again[0].seconds != firsts[0].seconds);
  REQUIRE(memo.find("cpu:test", tiny_add_kernel(), space, batch[0])->seconds == firsts[0].seconds);

  // Another device's runs share nothing with these.
  REQUIRE_FALSE(memo.find("cpu:other", tiny_add_kernel(), space, batch[0]));
}

TEST_CASE("a measurement memo is read back by the next sitting, a torn last line dropped", "[hardware]") {
  const std::string path = scratch_dir("measure_once_reread") + "/memo.jsonl";
  const SearchSpace space = knob_space();
  double measured_seconds = 0;
  {
    MeasurementMemo memo(path);
    MeasureOnceBackend run(std::make_unique<CountingBackend>(), memo);
    measured_seconds = run.measure(tiny_add_kernel(), space, configs({3}))[0].seconds;
  }
  std::ofstream(path, std::ios::app) << R"({"v":1,"type":"record","device":"cpu:te)";  // killed mid-line
  MeasurementMemo reread(path, MemoScope::kExperiment);
  REQUIRE(reread.size() == 1);
  REQUIRE(reread.find("cpu:test", tiny_add_kernel(), space, Config{{3, 1}})->seconds == measured_seconds);
  // The torn line was cut off: what is appended now is read back whole.
  reread.add("cpu:test", tiny_add_kernel(), space, Config{{2, 2}}, MeasureResult::from_repeats({4e-3}, 0.1));
  // Another space of the same kernel (its fusion placements beside its schedule) shares the file.
  const SearchSpace placements({{"fuse.a", {0, 1}}});
  reread.add("cpu:test", tiny_add_kernel(), placements, Config{{1}}, MeasureResult::from_repeats({5e-3}, 0.1));
  const MeasurementMemo third(path, MemoScope::kExperiment);
  REQUIRE(third.size() == 3);
  REQUIRE(third.find("cpu:test", tiny_add_kernel(), placements, Config{{1}})->seconds == 5e-3);
}

TEST_CASE("a measurement memo serves another sitting's figures only when asked to", "[hardware]") {
  const std::string path = scratch_dir("measure_once_sittings") + "/memo.jsonl";
  const SearchSpace space = knob_space();
  double first_sitting = 0;
  {
    MeasurementMemo memo(path);
    MeasureOnceBackend run(std::make_unique<CountingBackend>(), memo);
    first_sitting = run.measure(tiny_add_kernel(), space, configs({3}))[0].seconds;
  }
  double second_sitting = 0;
  {
    // The machine may have drifted since: config 3 is measured again, and its new figure is the
    // one the rest of this sitting reads.
    MeasurementMemo memo(path);
    REQUIRE(memo.scope() == MemoScope::kSitting);
    REQUIRE(memo.size() == 1);
    REQUIRE_FALSE(memo.find("cpu:test", tiny_add_kernel(), space, Config{{3, 1}}));
    auto device = std::make_unique<CountingBackend>();
    CountingBackend& counts = *device;
    counts.measured = 10;  // a figure unlike the first sitting's
    MeasureOnceBackend first_run(std::move(device), memo);
    second_sitting = first_run.measure(tiny_add_kernel(), space, configs({3}))[0].seconds;
    REQUIRE(counts.measured == 11);
    MeasureOnceBackend second_run(std::make_unique<CountingBackend>(), memo);
    REQUIRE(second_run.measure(tiny_add_kernel(), space, configs({3}))[0].seconds == second_sitting);
    REQUIRE(second_run.reused() == 1);
    REQUIRE(memo.size() == 1);
  }
  std::ifstream log(path);
  std::size_t lines = 0;
  for (std::string line; std::getline(log, line);) lines += !line.empty();
  REQUIRE(lines == 2);  // both sittings' figures kept
  // Across sittings: each config's first figure.
  const MeasurementMemo every_sitting(path, MemoScope::kExperiment);
  REQUIRE(every_sitting.find("cpu:test", tiny_add_kernel(), space, Config{{3, 1}})->seconds == first_sitting);
  REQUIRE(first_sitting != second_sitting);
}

}  // namespace
}  // namespace perftune
