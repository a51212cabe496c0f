// A batch spread over ranks (threads standing in for mpirun's processes) comes back whole, in
// batch order, with each rank measuring a contiguous share; the runner protocol round-trips.
#include "hardware/wrappers/rank_spread_backend.h"

#include <thread>

#include "hardware/process/runner_protocol.h"
#include "hardware_test_support.h"
#include "ir/input_error.h"
#include "thread_ranks.h"

namespace perftune {
namespace {

// a = 7 is outside the space: the rank-0 check must catch it (serving ranks see no constraint).
SearchSpace knob_space() {
  return SearchSpace({{"a", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}, {"b", {1, 2}}}, [](const Config& c) { return c.values[0] != 7; });
}

// A deterministic device: the runtime is a function of the config; it notes what it measured.
class NotingBackend : public Backend {
 public:
  explicit NotingBackend(std::string device, bool broken = false) : device_(std::move(device)), broken_(broken) {}
  std::vector<MeasureResult> measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) override {
    if (broken_) throw std::runtime_error("no compiler on this host");
    std::vector<MeasureResult> out;
    for (const Config& c : configs) {
      measured.push_back(c.values[0]);
      MeasureResult r = MeasureResult::from_repeats({1e-3 * static_cast<double>(1 + c.values[0]) / 3.0, 2e-3 / 7.0}, 0.1 * static_cast<double>(c.values[1]));
      r.message = kernel.name();
      out.push_back(std::move(r));
    }
    return out;
  }
  std::string fingerprint() const override { return device_; }
  std::vector<std::int64_t> measured;

 private:
  std::string device_;
  bool broken_;
};

std::vector<Config> batch() {
  std::vector<Config> configs;
  for (std::int64_t a = 0; a < 10; ++a) configs.push_back(Config{{a, 1 + a % 2}});
  return configs;
}

TEST_CASE("a batch spread over three ranks comes back in batch order, each rank measuring a contiguous share", "[hardware][ranks]") {
  ThreadWorld world(3);
  NotingBackend one("cpu:test"), two("cpu:test");
  std::thread serving_one([&] { serve_measurements(one, world.rank(1)); });
  std::thread serving_two([&] { serve_measurements(two, world.rank(2)); });
  auto local = std::make_unique<NotingBackend>("cpu:test");
  NotingBackend& zero = *local;
  RankSpreadBackend spread(std::move(local), world.rank(0));
  const SearchSpace space = knob_space();
  const std::vector<Config> configs = batch();
  const auto results = spread.measure(tiny_add_kernel(), space, configs);
  stop_serving(world.rank(0));
  serving_one.join();
  serving_two.join();

  NotingBackend alone("cpu:test");
  std::vector<Config> valid;
  for (const Config& c : configs)
    if (space.contains(c)) valid.push_back(c);
  const auto expected = alone.measure(tiny_add_kernel(), space, valid);
  REQUIRE(results.size() == configs.size());
  std::size_t v = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    CAPTURE(i);
    if (configs[i].values[0] == 7) {
      CHECK(results[i].status == MeasureStatus::kInvalidConfig);
      continue;
    }
    const MeasureResult& want = expected[v++];
    REQUIRE(results[i].ok());
    CHECK(results[i].seconds == want.seconds);  // exactly: doubles round-trip through the protocol
    CHECK(results[i].spread == want.spread);
    CHECK(results[i].repeats == want.repeats);
    CHECK(results[i].cost_seconds == want.cost_seconds);
    CHECK(results[i].message == "add");
  }
  CHECK(zero.measured == std::vector<std::int64_t>{0, 1, 2});
  CHECK(one.measured == std::vector<std::int64_t>{3, 4, 5});
  CHECK(two.measured == std::vector<std::int64_t>{6, 8, 9});
}

TEST_CASE("a rank on another device is refused by name, and a rank that cannot measure fails only its share", "[hardware][ranks]") {
  {
    ThreadWorld world(2);
    NotingBackend other("cpu:other");
    std::thread serving([&] { serve_measurements(other, world.rank(1)); });
    CHECK_THROWS_WITH(RankSpreadBackend(std::make_unique<NotingBackend>("cpu:test"), world.rank(0)),
                      Catch::Contains("rank 1 measures on cpu:other, rank 0 on cpu:test"));
    stop_serving(world.rank(0));
    serving.join();
  }
  ThreadWorld world(2);
  NotingBackend broken("cpu:test", /*broken=*/true);
  std::thread serving([&] { serve_measurements(broken, world.rank(1)); });
  RankSpreadBackend spread(std::make_unique<NotingBackend>("cpu:test"), world.rank(0));
  const std::vector<Config> configs = {Config{{0, 1}}, Config{{1, 1}}, Config{{2, 2}}, Config{{3, 2}}};
  const auto results = spread.measure(tiny_add_kernel(), knob_space(), configs);
  stop_serving(world.rank(0));
  serving.join();
  CHECK(results[0].ok());
  CHECK(results[1].ok());
  for (std::size_t i = 2; i < 4; ++i) {
    CHECK(results[i].status == MeasureStatus::kRuntimeError);
    CHECK_THAT(results[i].message, Catch::Contains("rank 1: no compiler on this host"));
  }
}

TEST_CASE("the runner protocol reads back what it writes, and names what a bad request lacks", "[hardware][ranks]") {
  const SearchSpace space = knob_space();
  const std::vector<Config> configs = batch();
  const RunnerRequest request = parse_runner_request(runner_request(tiny_add_kernel(), space, configs), "request");
  CHECK(request.kernel.key() == tiny_add_kernel().key());
  CHECK(request.space.knob_names() == space.knob_names());
  CHECK(request.configs == configs);

  std::vector<MeasureResult> results = {MeasureResult::from_repeats({1.0 / 3.0, 0.1, 2e-9}, 0.7),
                                        MeasureResult::failure(MeasureStatus::kWrongResult, "off by 1e3 at y[0]", 0.25)};
  const auto back = parse_runner_response(runner_response(results), 2, "reply");
  CHECK(back[0].seconds == results[0].seconds);
  CHECK(back[0].spread == results[0].spread);
  CHECK(back[0].repeats == results[0].repeats);
  CHECK(back[0].cost_seconds == results[0].cost_seconds);
  CHECK(back[1].status == MeasureStatus::kWrongResult);
  CHECK(back[1].message == results[1].message);
  CHECK(back[1].cost_seconds == 0.25);

  nlohmann::json tampered = nlohmann::json::parse(runner_request(tiny_add_kernel(), space, configs));
  tampered["kernel"]["key"] = "not-the-key";
  CHECK_THROWS_WITH(parse_runner_request(tampered.dump(), "request"), Catch::Contains("$.kernel.key"));
  tampered = nlohmann::json::parse(runner_request(tiny_add_kernel(), space, configs));
  tampered["configs"][1] = {{"a", 1}, {"c", 2}};
  CHECK_THROWS_WITH(parse_runner_request(tampered.dump(), "request"), Catch::Contains("$.configs[1]"));
}

}  // namespace
}  // namespace perftune
