#pragma once
// Runs a campaign end to end: loads its source, builds backend, model and strategy through the
// factories, resumes from DIR/records.jsonl if it exists, runs the budget loop, and writes
// DIR/summary.json.
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "autotuner/campaign/campaign.h"
#include "autotuner/campaign/campaign_summary.h"
#include "distributed/ranks.h"
#include "hardware/backend.h"
#include "ir/corpus.h"

namespace perftune {

struct CampaignRunOptions {
  std::string output;               // overrides campaign.output when non-empty
  std::ostream* progress = nullptr;  // one line per round, when set
  // A live program target also measures the backend's peers (Backend::measure_peers) into
  // "defaults"; an experiment measures them once per space instead.
  bool measure_peers = true;
  // Wraps the backend the campaign built before tuning starts (an experiment's measurement memo);
  // none by default.
  std::function<std::unique_ptr<Backend>(std::unique_ptr<Backend>)> wrap_backend;
  // Wraps the device backend, below a fault layer (make_backend's wrap_device): mpirun's
  // RankSpreadBackend, which spreads each batch over the ranks' devices; none by default.
  std::function<std::unique_ptr<Backend>(std::unique_ptr<Backend>)> wrap_device;
};

// The run's summary (campaign_summary.h), also written to DIR/summary.json. Throws InputError for
// campaign problems found while building (a kernel not in the source, a default config outside the
// space, a live backend asked to run a kernel that has no graph).
CampaignSummary run_campaign(const Campaign& campaign, const CampaignRunOptions& options = {});

// The one measured kernel of `corpus` that the campaign's source section names. Throws
// InputError naming what the source holds when none or several match.
const MeasuredKernel& campaign_kernel(const Corpus& corpus, const Campaign& campaign);

// The same on a source already loaded (`corpus` must be what load_source(campaign.source.path)
// returns; it is only read, so many campaigns may share it across threads). "load_seconds" is 0.
CampaignSummary run_campaign(const Campaign& campaign, const Corpus& corpus, const CampaignRunOptions& options = {});

// A serving rank of `mpirun -n N perftune tune` (hardware/wrappers/rank_spread_backend.h): builds the
// campaign's backend on this rank's device (a replay backend loads the recording), without its fault
// layer (rank 0 draws the faults), and measures what rank 0 sends until rank 0 stops it.
void serve_campaign(const Campaign& campaign, Ranks& ranks);

}  // namespace perftune
