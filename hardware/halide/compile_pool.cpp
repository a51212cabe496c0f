#include "hardware/halide/compile_pool.h"

#include <variant>

#include "hardware/halide/worker_reply.h"

namespace perftune {

HalideCompilePool::HalideCompilePool(const std::vector<std::string>& command, int workers) {
  for (int w = 0; w < workers; ++w) workers_.push_back(std::make_unique<WorkerProcess>(command));
}

std::size_t HalideCompilePool::worker_starts() const {
  std::size_t starts = 0;
  for (const auto& worker : workers_) starts += worker->starts();
  return starts;
}

std::vector<KeptPipeline> HalideCompilePool::compile(const std::vector<nlohmann::json>& requests, const HalideBackendOptions& options) {
  std::vector<KeptPipeline> kept(requests.size());
  // Those whose worker died before their turn are left uncompiled, for the caller to compile and run.
  run_striped(workers_, requests.size(), [&](WorkerProcess& worker, std::size_t w, std::size_t t) {
    const WorkerReply reply = worker.request(requests[t].dump(), options.run_timeout_seconds);
    auto read = read_worker_reply(reply, reply.wall_seconds, WorkerStep::kCompile, options);
    const bool compiled = std::holds_alternative<nlohmann::json>(read);
    kept[t] = {w, worker.starts(), compiled, std::nullopt, reply.wall_seconds};
    if (!compiled) kept[t].failure = std::move(std::get<MeasureResult>(read));
  });
  return kept;
}

}  // namespace perftune
