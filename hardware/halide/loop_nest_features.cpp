#include "hardware/halide/loop_nest_features.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "hardware/process/worker_process.h"
#include "ir/program_json.h"

namespace perftune {

namespace {

// A reply's row, or nullopt if the worker failed the config or answered something else.
std::optional<std::vector<float>> row_of(const WorkerReply& reply) {
  if (!reply.line) return std::nullopt;
  try {
    const nlohmann::json json = nlohmann::json::parse(*reply.line);
    if (json.value("status", "") != "ok" || !json.contains("loop_nest")) return std::nullopt;
    std::vector<float> row = json.at("loop_nest").get<std::vector<float>>();
    if (row.size() != kLoopNestFeatureCount) return std::nullopt;
    return row;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

LoopNestFeaturizer::LoopNestFeaturizer(LoopNestOptions options) : options_(std::move(options)) {
  if (options_.runner.empty()) options_.runner = {PERFTUNE_HALIDE_RUNNER};
  if (!std::filesystem::exists(options_.runner.front()))
    throw std::runtime_error("the Halide runner " + options_.runner.front() + " does not exist (build the perftune_halide_runner target)");
  std::vector<std::string> argv = options_.runner;
  argv.push_back("1");  // threads: nothing runs, and lowering is single-threaded
  for (int w = 0; w < std::max(1, options_.workers); ++w) workers_.push_back(std::make_unique<WorkerProcess>(argv));
}

LoopNestFeaturizer::~LoopNestFeaturizer() = default;

std::vector<float> LoopNestFeaturizer::rows(const Program& body, std::span<const std::map<std::string, std::int64_t>> schedules) {
  std::vector<float> out(schedules.size() * kLoopNestFeatureCount, std::numeric_limits<float>::quiet_NaN());
  if (schedules.empty()) return out;
  const nlohmann::json program = program_to_json(body);
  std::vector<std::size_t> failed(workers_.size(), 0);
  const auto lower = [&](WorkerProcess& worker, std::size_t w, std::size_t i) {
    nlohmann::json request = {{"program", program}, {"loop_nest", true}};
    request["schedule"] = nlohmann::json::object();
    for (const auto& [name, value] : schedules[i]) request["schedule"][name] = value;
    const std::optional<std::vector<float>> row = row_of(worker.request(request.dump(), options_.timeout_seconds));
    if (row)
      std::copy(row->begin(), row->end(), out.begin() + i * kLoopNestFeatureCount);
    else
      ++failed[w];
  };
  // A config after its worker's crash or timeout is lowered here, restarting the worker from this thread.
  for (std::size_t i : run_striped(workers_, schedules.size(), lower)) lower(*workers_[i % workers_.size()], i % workers_.size(), i);
  for (std::size_t f : failed) failed_rows_ += f;
  return out;
}

}  // namespace perftune
