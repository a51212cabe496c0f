#pragma once
// A whole network tuned under one budget (a campaign whose source is a "network"):
//   - the network is partitioned into kernels, identical ones merged (network_tasks.h);
//   - every kernel gets a budget loop of its own (autotuner/tuning_session.h) with the campaign's
//     model (one model shared; a score cache each) and strategy (one each), its heuristic schedule
//     measured first, the fallback should nothing better run;
//   - each kernel's first round measures its heuristic alone (the network then has a latency);
//     later rounds of top_k configs (default kNetworkTopK) go to the kernel the allocation picks
//     (task_scheduler.h), until the budget is spent: measurements over the network, hardware
//     seconds, or minutes of tuning time (the backend time charged for every measurement, from the
//     log on resume, plus this run's time outside the backend);
//   - after every round the network's estimated latency (each kernel's best time times the times
//     it appears) is printed with a progress bar and the time left, and DIR/network.json is
//     rewritten atomically, so a killed run leaves its state;
//   - DIR/records.jsonl holds every measurement; a rerun adopts the log (nothing measured twice)
//     and goes on until the budget is spent.
// A kernel whose compile or run fails is a logged failure; the kernel keeps its best schedule that
// ran (the heuristic at first), and the run goes on. Under mpirun, every round's batch is spread
// over the ranks' devices, as a campaign's is.
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "autotuner/campaign/campaign.h"
#include "hardware/backend.h"

namespace perftune {

// Configs per round of one kernel, unless the campaign sets top_k: small, so that a budget of a
// few hundred measurements still gives a network's tens of kernels several rounds each.
inline constexpr std::size_t kNetworkTopK = 8;

struct NetworkTuneOptions {
  std::string output;                // overrides campaign.output when non-empty
  std::ostream* progress = nullptr;  // one line per round, when set
  // Wraps the device backend (mpirun's RankSpreadBackend), as CampaignRunOptions::wrap_device.
  std::function<std::unique_ptr<Backend>(std::unique_ptr<Backend>)> wrap_device;
};

// Tunes `campaign` (its source must be a network) and returns what DIR/network.json holds:
// "network", "source", "device", "allocation", "model", "strategy", "budget", "kernels" (in the
// network), "tasks" (distinct), "latency_seconds" (the estimate now; null while a kernel has no
// time), "heuristic_latency_seconds", "speedup_over_heuristic", "measurements", "failed",
// "tuning_seconds", "wall_seconds", "stop_reason", "untimed" (kernels with nothing that ran),
// "rounds" (per round: task, measurements, tuning_seconds, latency_seconds) and "task_list" (per
// task: name, key, instances, measurements, failed, rounds, best and heuristic seconds, best
// config, share of the latency). Throws InputError for a network the backend cannot run.
nlohmann::ordered_json tune_network(const Campaign& campaign, const NetworkTuneOptions& options = {});

}  // namespace perftune
