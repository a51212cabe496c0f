#include "autotuner/autoscheduler_sampling.h"

#include <optional>

#include "ir/random.h"

namespace perftune {

AutoschedulerSamplingOptions parse_autoscheduler_sampling(const JsonView& view) {
  view.expect_keys({"type", "autoscheduler", "batch", "beam_size", "dropout", "first_beam_size", "machine"});
  AutoschedulerSamplingOptions options;
  options.autoscheduler = view.get_string("autoscheduler", options.autoscheduler);
  if (options.autoscheduler != "Adams2019") view.at("autoscheduler").fail("\"Adams2019\" (the one autoscheduler with a sampling mode)");
  if (const auto v = view.find("batch")) options.batch = static_cast<std::size_t>(v->as_positive_int());
  if (const auto v = view.find("beam_size")) options.beam_size = static_cast<int>(v->as_positive_int());
  if (const auto v = view.find("first_beam_size")) options.first_beam_size = static_cast<int>(v->as_positive_int());
  if (const auto v = view.find("dropout")) {
    options.dropout = static_cast<int>(v->as_positive_int());
    if (options.dropout > 100) v->fail("a percentage in 1..100");
  }
  options.machine = view.get_string("machine", options.machine);
  return options;
}

AutoschedulerRun autoscheduler_sample(const AutoschedulerSamplingOptions& options, std::uint64_t seed, std::size_t index) {
  const bool beam_search = index % options.batch == 0;
  AutoschedulerRun run{options.autoscheduler, options.machine, {}};
  run.env["HL_SEED"] = std::to_string(splitmix64(seed * 1'000'003 + index) % 1'000'000'007);
  run.env["HL_BEAM_SIZE"] = std::to_string(beam_search ? options.first_beam_size : options.beam_size);
  run.env["HL_RANDOM_DROPOUT"] = std::to_string(beam_search ? 100 : options.dropout);
  return run;
}

std::vector<AutoscheduledMeasurement> sample_autoscheduler(
    HalideBackend& backend, const Kernel& kernel, const AutoschedulerSamplingOptions& options, std::uint64_t seed,
    std::size_t budget, const std::function<void(std::size_t, const AutoscheduledMeasurement&)>& done) {
  std::vector<AutoscheduledMeasurement> results;
  // Batch 0's beam search: without retraining, every later batch's finds the same schedule. A
  // crashed one (runtime_error: it may be the machine's doing) is searched again.
  std::optional<AutoscheduledMeasurement> beam_search;
  for (std::size_t i = 0; i < budget; ++i) {
    const bool is_beam_search = i % options.batch == 0;
    if (is_beam_search && beam_search && beam_search->result.status != MeasureStatus::kRuntimeError) {
      results.push_back(*beam_search);
    } else {
      results.push_back(backend.measure_autoscheduled(kernel, autoscheduler_sample(options, seed, i)));
      if (is_beam_search) beam_search = results.back();
    }
    if (done) done(i, results.back());
  }
  return results;
}

}  // namespace perftune
