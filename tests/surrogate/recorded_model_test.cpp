// The recorded-times reference (surrogate/transfer/recorded_model.h): the source device's own times, matched
// by knob name, with failed configs as slow as the slowest and unrecorded ones at the median.
#include "surrogate/transfer/recorded_model.h"

#include <cmath>
#include <memory>

#include <catch2/catch.hpp>

namespace perftune {
namespace {

const Kernel kKernel = Kernel::opaque("toy", "00000000000000c0");

std::shared_ptr<const MeasuredKernel> recording() {
  auto kernel = std::make_shared<MeasuredKernel>();
  kernel->kernel = kKernel;
  kernel->device = "GPU A";
  kernel->space = std::make_shared<const SearchSpace>(SearchSpace({{"bx", {16, 32}}, {"by", {1, 2, 4}}}));
  auto ok = [](double seconds) { return MeasureResult::from_repeats({seconds}, 0.0); };
  kernel->measurements = {{Config{{16, 1}}, ok(1e-3)}, {Config{{16, 2}}, ok(2e-3)}, {Config{{32, 1}}, ok(4e-3)},
                          {Config{{32, 2}}, MeasureResult::failure(MeasureStatus::kCompileError, "too big")}};
  return kernel;
}

TEST_CASE("recorded times: a config's recorded log time, matched by knob name") {
  RecordedTimesModel model(recording());
  CHECK(model.name() == "recorded:GPU A");
  // The target lists its knobs the other way round.
  const SearchSpace target({{"by", {1, 2, 4}}, {"bx", {16, 32}}});
  const std::vector<Config> configs = {Config{{1, 16}}, Config{{2, 16}}, Config{{1, 32}}, Config{{2, 32}}, Config{{4, 16}}};
  std::vector<float> out(configs.size());
  model.predict(kKernel, target, configs, out);
  CHECK(out[0] == Approx(std::log(1e-3)));
  CHECK(out[1] == Approx(std::log(2e-3)));
  CHECK(out[2] == Approx(std::log(4e-3)));
  CHECK(out[3] == Approx(std::log(4e-3)));  // failed there: as slow as the slowest
  CHECK(out[4] == Approx(std::log(2e-3)));  // not recorded: the median, no opinion
}

TEST_CASE("recorded times: a target with other knobs gets no opinion, and a recording needs a success") {
  RecordedTimesModel model(recording());
  const SearchSpace other({{"bx", {16, 32}}, {"unroll", {0, 1}}});
  std::vector<float> out(2);
  const std::vector<Config> configs = {Config{{16, 0}}, Config{{32, 1}}};
  model.predict(kKernel, other, configs, out);
  CHECK(out[0] == Approx(std::log(2e-3)));
  CHECK(out[1] == Approx(std::log(2e-3)));

  auto failed = std::make_shared<MeasuredKernel>(*recording());
  for (Measurement& m : failed->measurements) m.result = MeasureResult::failure(MeasureStatus::kRuntimeError, "crash");
  CHECK_THROWS_AS(RecordedTimesModel(failed), std::invalid_argument);
}

}  // namespace
}  // namespace perftune
