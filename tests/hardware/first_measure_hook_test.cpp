// The hook before a backend's first measurement: called once, only when something is measured.
#include "hardware/wrappers/first_measure_hook.h"

#include "hardware_test_support.h"

namespace perftune {
namespace {

class OneSecondBackend : public Backend {
 public:
  std::vector<MeasureResult> measure(const Kernel&, const SearchSpace&, std::span<const Config> configs) override {
    measured += configs.size();
    return std::vector<MeasureResult>(configs.size(), MeasureResult::from_repeats({1.0}, 1.0));
  }
  std::string fingerprint() const override { return "cpu:test"; }
  std::size_t measured = 0;
};

TEST_CASE("a first-measure hook runs once, before the first measurement, and not for a fingerprint", "[hardware]") {
  auto inner = std::make_unique<OneSecondBackend>();
  const OneSecondBackend& seen = *inner;
  int hooked = 0;
  std::size_t measured_when_hooked = 99;
  FirstMeasureHook backend(std::move(inner), [&] {
    ++hooked;
    measured_when_hooked = seen.measured;
  });
  REQUIRE(backend.fingerprint() == "cpu:test");
  REQUIRE(hooked == 0);
  const Kernel kernel = tiny_add_kernel();
  const SearchSpace space({{"k", {1, 2}}});
  const std::vector<Config> two = {Config{{1}}, Config{{2}}};
  REQUIRE(backend.measure(kernel, space, two).size() == 2);
  REQUIRE(backend.measure(kernel, space, two).size() == 2);
  REQUIRE(hooked == 1);
  REQUIRE(measured_when_hooked == 0);
  REQUIRE(seen.measured == 4);
}

}  // namespace
}  // namespace perftune
