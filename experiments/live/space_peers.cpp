#include "experiments/live/space_peers.h"

#include <algorithm>
#include <filesystem>

#include "autotuner/campaign/program_target.h"
#include "autotuner/factories/backend_factory.h"
#include "experiments/live/remeasurement.h"
#include "ir/file_io.h"

namespace perftune {

nlohmann::ordered_json space_peers(const Campaign& campaign, const std::string& file) {
  const ProgramTarget target = program_target(campaign);
  std::unique_ptr<Backend> backend = make_backend(campaign.backend, Corpus{}, "");
  const std::string device = backend->fingerprint();
  if (path_exists(file)) {
    const nlohmann::ordered_json kept = nlohmann::ordered_json::parse(read_file(file), nullptr, false);
    // Peers written before they had a kind (scheduler or library) are measured again.
    if (kept.is_object() && kept.value("kernel_key", "") == target.kernel.key() && kept.value("device", "") == device &&
        kept.contains("peers") && kept["peers"].is_object() &&
        std::all_of(kept["peers"].begin(), kept["peers"].end(), [](const auto& peer) { return peer.contains("kind"); }))
      return kept.at("peers");
  }
  nlohmann::ordered_json peers = nlohmann::ordered_json::object();
  for (const PeerMeasurement& peer : backend->measure_peers(target.kernel)) {
    nlohmann::ordered_json entry = {
        {"kind", peer_kind_name(peer.kind)}, {"settings", peer.settings}, {"status", std::string(status_name(peer.result.status))}};
    entry["seconds"] = peer.result.ok() ? nlohmann::ordered_json(peer.result.seconds) : nlohmann::ordered_json(nullptr);
    if (!peer.result.ok()) entry["message"] = peer.result.message;
    peers[peer.name] = std::move(entry);
  }
  std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  write_file_atomically(file, nlohmann::ordered_json{{"kernel_key", target.kernel.key()}, {"device", device}, {"peers", peers}}.dump(1) + "\n");
  return peers;
}

std::optional<nlohmann::ordered_json> remeasured_peers(const Campaign& campaign, const std::string& folder, std::size_t repeats,
                                                       const std::function<bool()>& stop) {
  std::vector<nlohmann::ordered_json> rounds;
  for (std::size_t round = 1; round <= repeats; ++round) {
    const std::string file = (std::filesystem::path(folder) / ("peers_round_" + std::to_string(round) + ".json")).string();
    if (!path_exists(file) && stop && stop()) return std::nullopt;
    rounds.push_back(space_peers(campaign, file));  // a fresh backend each round
  }
  nlohmann::ordered_json peers = nlohmann::ordered_json::object();
  if (rounds.empty()) return peers;
  for (const auto& [name, first] : rounds.front().items()) {
    std::vector<MeasureResult> results;
    nlohmann::ordered_json seconds = nlohmann::ordered_json::array();
    for (const auto& round : rounds) {
      const bool ok = round.contains(name) && round[name].contains("seconds") && round[name]["seconds"].is_number();
      seconds.push_back(ok ? round[name]["seconds"] : nlohmann::ordered_json(nullptr));
      results.push_back(ok ? MeasureResult::from_repeats({round[name]["seconds"].get<double>()}, 0.0)
                           : MeasureResult::failure(MeasureStatus::kRuntimeError, "failed in this round"));
    }
    const std::optional<double> median = remeasured_seconds(results);
    peers[name] = {{"kind", first.value("kind", "scheduler")}, {"settings", first.value("settings", "")}, {"round_seconds", seconds},
                   {"seconds", median ? nlohmann::ordered_json(*median) : nlohmann::ordered_json(nullptr)}};
  }
  return peers;
}

}  // namespace perftune
