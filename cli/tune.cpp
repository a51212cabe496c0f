// perftune tune CAMPAIGN.json [--json] [--output DIR]: run a tuning campaign (resumes from DIR's log).
#include <iostream>
#include <memory>

#include "autotuner/campaign/campaign.h"
#include "autotuner/campaign/campaign_runner.h"
#include "cli/command.h"
#include "distributed/ranks.h"
#include "hardware/wrappers/rank_spread_backend.h"
#include "surrogate/training/torch_threads.h"

namespace perftune::cli {
namespace {

struct TuneOptions {
  std::string campaign;
  std::string output;
  bool json = false;
  int threads = 1;
};

const bool registered = register_command({"tune", "Run a tuning campaign from JSON; resumes from its record log",
  [](CLI::App& app) {
    auto options = std::make_shared<TuneOptions>();
    app.add_option("campaign", options->campaign, "Campaign JSON (configs/campaigns/*.json)")->required();
    app.add_option("--output", options->output, "Folder for records.jsonl and summary.json (overrides the campaign's)");
    app.add_flag("--json", options->json, "Print the summary as JSON on stdout");
    // One thread by default, as in `perftune train`: search already scores from TBB's threads, and
    // libtorch's OpenMP workers on top of them spend most of a learned campaign's CPU spinning in
    // libgomp's barriers (a profile shows it).
    app.add_option("--threads", options->threads, "libtorch intra-op threads (0: one per core)")->capture_default_str();
    app.callback([options] {
      configure_torch_threads(options->threads);
      const Campaign campaign = load_campaign(options->campaign);
      // Under mpirun each rank owns one device: rank 0 tunes, spreading every batch over them all.
      Ranks& ranks = process_ranks();
      if (ranks.rank() > 0) return serve_campaign(campaign, ranks);
      CampaignRunOptions run_options;
      if (ranks.size() > 1)
        run_options.wrap_device = [&ranks](std::unique_ptr<Backend> local) -> std::unique_ptr<Backend> {
          return std::make_unique<RankSpreadBackend>(std::move(local), ranks);
        };
      run_options.output = options->output;
      run_options.progress = &std::cerr;
      const auto summary = run_campaign(campaign, run_options);
      stop_serving(ranks);
      if (options->json) {
        print_json(summary.dump(2));
        return;
      }
      const std::string output = options->output.empty() ? campaign.output : options->output;
      std::cout << "best " << summary["best_seconds"].dump() << " s after " << summary["measurements"].dump()
                << " measurements (" << summary["hardware_seconds"].dump() << " hardware seconds); default "
                << summary["default_seconds"].dump() << " s; speedup over default " << summary["speedup_over_default"].dump()
                << "\nbest config " << summary["best_config"].dump() << "\nrecords in " << output
                << "/records.jsonl, summary in " << output << "/summary.json\n";
    });
  }});

}  // namespace
}  // namespace perftune::cli
