#include "hardware/wrappers/rank_spread_backend.h"

#include <stdexcept>

#include "hardware/process/runner_protocol.h"

namespace perftune {

namespace {

// Messages from rank 0 besides a runner request (which is a JSON object).
constexpr const char* kFingerprintMessage = "fingerprint";
constexpr const char* kStopMessage = "stop";

}  // namespace

RankSpreadBackend::RankSpreadBackend(std::unique_ptr<Backend> local, Ranks& ranks) : local_(std::move(local)), ranks_(ranks) {
  const std::string device = local_->fingerprint();
  for (int rank = 1; rank < ranks_.size(); ++rank) {
    ranks_.send(rank, kFingerprintMessage);
    const std::string theirs = ranks_.receive(rank);
    if (theirs != device)
      throw std::runtime_error("rank " + std::to_string(rank) + " measures on " + theirs + ", rank 0 on " + device +
                               ": one record log names one device; launch one kind of host per campaign");
  }
}

std::vector<MeasureResult> RankSpreadBackend::measure(const Kernel& kernel, const SearchSpace& space, std::span<const Config> configs) {
  std::vector<MeasureResult> results(configs.size());
  std::vector<std::size_t> valid;  // indices into configs
  std::vector<Config> spread;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (space.contains(configs[i])) {
      valid.push_back(i);
      spread.push_back(configs[i]);
    } else {
      results[i] = MeasureResult::failure(MeasureStatus::kInvalidConfig, "config " + configs[i].to_string() + " is not in the search space");
    }
  }
  // Contiguous shares, sizes differing by at most one; rank 0 keeps the first.
  const auto shares = static_cast<std::size_t>(ranks_.size());
  const auto share = [&](std::size_t k) {
    const std::size_t begin = spread.size() * k / shares, end = spread.size() * (k + 1) / shares;
    return std::span<const Config>(spread).subspan(begin, end - begin);
  };
  for (std::size_t k = 1; k < shares; ++k)
    if (!share(k).empty()) ranks_.send(static_cast<int>(k), runner_request(kernel, space, share(k)));
  std::vector<MeasureResult> measured;
  if (!share(0).empty()) measured = local_->measure(kernel, space, share(0));
  for (std::size_t k = 1; k < shares; ++k) {
    const auto configs_k = share(k);
    if (configs_k.empty()) continue;
    const std::string source = "rank " + std::to_string(k) + "'s reply";
    const std::string reply = ranks_.receive(static_cast<int>(k));
    try {
      auto parsed = parse_runner_response(reply, configs_k.size(), source);
      measured.insert(measured.end(), parsed.begin(), parsed.end());
    } catch (const std::exception& error) {
      const std::string why = std::string(error.what()) + " (the reply began: " + reply.substr(0, 200) + ")";
      for (std::size_t i = 0; i < configs_k.size(); ++i) measured.push_back(MeasureResult::failure(MeasureStatus::kRuntimeError, why));
    }
  }
  for (std::size_t i = 0; i < valid.size(); ++i) results[valid[i]] = std::move(measured[i]);
  return results;
}

void serve_measurements(Backend& backend, Ranks& ranks) {
  for (;;) {
    const std::string message = ranks.receive(0);
    if (message == kStopMessage) return;
    if (message == kFingerprintMessage) {
      ranks.send(0, backend.fingerprint());
      continue;
    }
    const std::string here = "rank " + std::to_string(ranks.rank());
    std::string reply;
    try {
      const RunnerRequest request = parse_runner_request(message, here + ": rank 0's request");
      std::vector<MeasureResult> results;
      try {
        results = backend.measure(request.kernel, request.space, request.configs);
      } catch (const std::exception& error) {  // a backend that cannot work at all fails its share
        results.assign(request.configs.size(), MeasureResult::failure(MeasureStatus::kRuntimeError, here + ": " + error.what()));
      }
      reply = runner_response(results);
    } catch (const std::exception& error) {  // no request to answer: the reply says why instead
      reply = error.what();
    }
    ranks.send(0, reply);
  }
}

void stop_serving(Ranks& ranks) {
  for (int rank = 1; rank < ranks.size(); ++rank) ranks.send(rank, kStopMessage);
}

}  // namespace perftune
