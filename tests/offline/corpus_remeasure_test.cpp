// A recorded corpus re-measured: only the selected spaces' successful records of this device are
// measured again, each record's runtime becomes the lower median over its sittings, every other
// line is copied unchanged, a stopped call writes nothing and the next measures only what is
// missing, and re-measuring the written log again keeps the recorded figure as the first sitting.
#include "offline/corpus_remeasure.h"

#include <map>
#include <sstream>

#include "hardware/hardware_test_support.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/record_log.h"

namespace perftune {
namespace {

// The k-th measurement of config {a} takes (1 + a) ms x (1 + k / 10): each sitting slower.
class SittingsBackend : public Backend {
 public:
  explicit SittingsBackend(std::map<Config, int>& counts) : counts_(counts) {}
  std::vector<MeasureResult> measure(const Kernel&, const SearchSpace&, std::span<const Config> configs) override {
    std::vector<MeasureResult> out;
    for (const Config& c : configs) {
      const int k = ++counts_[c];
      out.push_back(MeasureResult::from_repeats({base(c) * (1.0 + 0.1 * k)}, 0.1));
    }
    return out;
  }
  std::string fingerprint() const override { return "cpu:test"; }
  static double base(const Config& c) { return 1e-3 * static_cast<double>(1 + c.values[0]); }

 private:
  std::map<Config, int>& counts_;
};

const Kernel& mul_kernel() {
  static const Kernel kernel("mul", program_from_text(R"({"name": "mul", "ops": [
    {"name": "a", "opcode": "parameter", "shape": [8], "parameter_number": 0},
    {"name": "y", "opcode": "multiply", "operands": ["a", "a"], "shape": [8]}]})"));
  return kernel;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE("a corpus re-measured: the selected records take the median over sittings, the rest is copied unchanged") {
  const std::string dir = scratch_dir("corpus_remeasure");
  const std::string input = dir + "/corpus.jsonl";
  const SearchSpace fusion({{"fuse.0", {0, 1, 2, 3}}});
  const SearchSpace tiles({{"tile.out.0", {1, 2, 4, 8}}});
  {
    RecordLog log(input);
    log.define_kernel(tiny_add_kernel(), fusion);
    log.define_kernel(mul_kernel(), tiles);
    const std::string key = tiny_add_kernel().key();
    const auto record = [&](const std::string& device, const std::string& kernel, const std::string& knob, std::int64_t value, MeasureResult result) {
      log.append(Record{device, kernel, "k", {knob}, Config{{value}}, std::move(result), 0.0});
    };
    for (std::int64_t a = 0; a < 3; ++a) record("cpu:test", key, "fuse.0", a, MeasureResult::from_repeats({0.5 * SittingsBackend::base(Config{{a}})}, 0.1));
    record("cpu:other", key, "fuse.0", 0, MeasureResult::from_repeats({9.0}, 0.1));
    record("cpu:test", mul_kernel().key(), "tile.out.0", 4, MeasureResult::from_repeats({7.0}, 0.1));
    log.append(Record{"cpu:test", key, "k", {"fuse.0"}, Config{{3}}, MeasureResult::failure(MeasureStatus::kCompileError, "no"), 0.0});
  }
  std::map<Config, int> counts;
  const BackendMaker make = [&] { return std::make_unique<SittingsBackend>(counts); };
  const CorpusRemeasureSpec spec{input, dir + "/out.jsonl", dir + "/rounds", 3, RemeasuredSpaces::kFusion};

  // Stopped at its first batch: nothing written, the next call measures only what is missing.
  int asked = 0;
  REQUIRE_FALSE(remeasure_corpus(spec, make, [&] { return ++asked > 1; }, nullptr).complete);
  REQUIRE_FALSE(path_exists(spec.output));
  std::vector<std::size_t> progress_done;
  const CorpusRemeasureSummary summary = remeasure_corpus(spec, make, nullptr, [&](const CollectProgress& p) {
    progress_done.push_back(p.done);
    REQUIRE(p.planned == 9);
  });
  REQUIRE(summary.complete);
  REQUIRE(progress_done == std::vector<std::size_t>{3, 6, 9});  // after each round of the one space
  REQUIRE(summary.spaces == 1);
  REQUIRE(summary.configs == 3);
  REQUIRE(summary.other_device == 1);
  REQUIRE(summary.failed_median == 0);
  for (std::int64_t a = 0; a < 3; ++a) REQUIRE(counts[Config{{a}}] == 3);  // each config once per round, none twice
  REQUIRE(counts.size() == 3);  // neither the failed config, the other device's nor the tile space's

  // Sittings 0.5, 1.1, 1.2, 1.3 x base: the lower median is 1.1 x base, a change of 120%.
  REQUIRE(summary.median_change == Approx(1.2));
  const LoadedLog written = RecordLog::load(spec.output);
  std::size_t fusion_ok = 0;
  for (const Record& r : written.records) {
    if (r.device != "cpu:test" || r.kernel_key != tiny_add_kernel().key() || !r.result.ok()) continue;
    REQUIRE(r.result.seconds == Approx(1.1 * SittingsBackend::base(r.config)));
    ++fusion_ok;
  }
  REQUIRE(fusion_ok == 3);
  const std::vector<std::string> before = lines_of(input), after = lines_of(spec.output);
  REQUIRE(before.size() == after.size());
  std::size_t rewritten = 0;
  for (std::size_t i = 0; i < before.size(); ++i)
    if (before[i] != after[i]) {
      ++rewritten;
      const auto line = nlohmann::json::parse(after[i]);
      REQUIRE(line.at("sittings").size() == 4);
      REQUIRE(line.at("sittings")[0].get<double>() == Approx(0.5 * SittingsBackend::base(Config{{line.at("config").at("fuse.0").get<std::int64_t>()}})));
    }
  REQUIRE(rewritten == 3);

  // The written log re-measured in place from the same rounds: the recorded figure stays the first
  // sitting, nothing is measured again, and the log reads the same.
  const CorpusRemeasureSpec again{spec.output, spec.output, spec.rounds_folder, 3, RemeasuredSpaces::kFusion};
  REQUIRE(remeasure_corpus(again, make, nullptr, nullptr).complete);
  REQUIRE(counts[Config{{0}}] == 3);
  REQUIRE(lines_of(spec.output) == after);

  // Tile spaces alone: the one tile record; a selection with nothing on this device is an input error.
  const CorpusRemeasureSummary tile = remeasure_corpus({input, dir + "/tile.jsonl", dir + "/rounds", 1, RemeasuredSpaces::kTile}, make, nullptr, nullptr);
  REQUIRE(tile.configs == 1);
  REQUIRE(counts[Config{{4}}] == 1);
  const BackendMaker elsewhere = [&] {
    struct Elsewhere : SittingsBackend {
      using SittingsBackend::SittingsBackend;
      std::string fingerprint() const override { return "cpu:elsewhere"; }
    };
    return std::make_unique<Elsewhere>(counts);
  };
  REQUIRE_THROWS_AS(remeasure_corpus(spec, elsewhere, nullptr, nullptr), InputError);
}

TEST_CASE("a corpus is re-measured round by round with one backend per round shared by its spaces") {
  const std::string dir = scratch_dir("corpus_remeasure_shared");
  const std::string input = dir + "/corpus.jsonl";
  const SearchSpace tiles({{"tile.out.0", {1, 2, 4, 8}}});
  {
    RecordLog log(input);
    log.define_kernel(tiny_add_kernel(), tiles);
    log.define_kernel(mul_kernel(), tiles);
    for (const Kernel* kernel : {&tiny_add_kernel(), &mul_kernel()})
      for (std::int64_t a : {1, 2})
        log.append(Record{"cpu:test", kernel->key(), kernel->name(), {"tile.out.0"}, Config{{a}}, MeasureResult::from_repeats({1e-3}, 0.1), 0.0});
  }
  std::map<Config, int> counts;
  int backends = 0;
  const BackendMaker make = [&] {
    ++backends;
    return std::make_unique<SittingsBackend>(counts);
  };
  const CorpusRemeasureSummary summary =
      remeasure_corpus({input, dir + "/out.jsonl", dir + "/rounds", 2, RemeasuredSpaces::kTile}, make, nullptr, nullptr);
  REQUIRE(summary.complete);
  CHECK(summary.spaces == 2);
  CHECK(summary.configs == 4);
  CHECK(backends == 2);  // not one per space and round (4)
  CHECK(counts[Config{{1}}] == 4);  // both kernels' config {1}, in each of the 2 rounds
}

// Issue 81: two re-measurements of one output both ran, and each round log ended with every
// config twice. The second now stops at once on the lock collect uses (LOG.lock), naming the holder.
TEST_CASE("a second re-measurement of the same output stops on its lock while the first runs") {
  const std::string dir = scratch_dir("corpus_remeasure_lock");
  const std::string input = dir + "/corpus.jsonl";
  const SearchSpace tiles({{"tile.out.0", {1, 2, 4, 8}}});
  {
    RecordLog log(input);
    log.define_kernel(tiny_add_kernel(), tiles);
    for (std::int64_t a : {1, 2})
      log.append(Record{"cpu:test", tiny_add_kernel().key(), tiny_add_kernel().name(), {"tile.out.0"}, Config{{a}},
                        MeasureResult::from_repeats({1e-3}, 0.1), 0.0});
  }
  const CorpusRemeasureSpec spec{input, dir + "/out.jsonl", dir + "/rounds", 1, RemeasuredSpaces::kTile};
  std::map<Config, int> counts;
  std::string second_error;
  bool inner = false;
  const BackendMaker make = [&]() -> std::unique_ptr<Backend> {
    if (!inner) {
      inner = true;  // the second run, started while the first holds its output
      try {
        remeasure_corpus(spec, [&] { return std::make_unique<SittingsBackend>(counts); }, nullptr, nullptr);
      } catch (const std::runtime_error& error) {
        second_error = error.what();
      }
    }
    return std::make_unique<SittingsBackend>(counts);
  };
  const CorpusRemeasureSummary summary = remeasure_corpus(spec, make, nullptr, nullptr);
  REQUIRE(summary.complete);
  CHECK(second_error.find("in use by another perftune") != std::string::npos);
  CHECK(second_error.find(spec.output) != std::string::npos);
  CHECK(counts[Config{{1}}] == 1);  // measured by the first run only
  // The lock is released with the run: a rerun on the same output proceeds (and resumes).
  CHECK(remeasure_corpus(spec, [&] { return std::make_unique<SittingsBackend>(counts); }, nullptr, nullptr).complete);
}

}  // namespace
}  // namespace perftune
