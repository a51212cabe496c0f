// perftune tune CAMPAIGN.json [--json] [--output DIR]: run a tuning campaign (resumes from DIR's log).
// perftune tune NETWORK.onnx|PROGRAM.json --output DIR --budget-minutes M | --budget-measurements N:
// tune every kernel of a network under one budget (autotuner/network/network_tuner.h); --export DIR
// then writes its library (export/network_export.h).
#include <filesystem>
#include <iostream>
#include <memory>

#include "autotuner/campaign/campaign.h"
#include "autotuner/campaign/campaign_runner.h"
#include "autotuner/network/network_tuner.h"
#include "autotuner/summary_fields.h"
#include "cli/command.h"
#include "distributed/ranks.h"
#include "export/network_export.h"
#include "hardware/wrappers/rank_spread_backend.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "surrogate/training/torch_threads.h"

namespace perftune::cli {
namespace {

struct TuneOptions {
  std::string campaign;
  std::string output;
  bool json = false;
  int threads = 1;
  double budget_minutes = 0;
  std::size_t budget_measurements = 0;
  std::string allocation;
  std::string export_dir;
};

// The file named on the command line: a network (an ONNX model, or a program JSON), or else a
// campaign's JSON, parsed once.
struct TuneInput {
  bool network = false;
  nlohmann::json campaign;
};

TuneInput read_tune_input(const std::string& path) {
  if (std::filesystem::path(path).extension() == ".onnx") return {true, {}};
  nlohmann::json json = parse_json_file(path);
  if (json.is_object() && json.value("format", "") == "perftune-program") return {true, {}};
  return {false, std::move(json)};
}

// A network named on the command line is tuned as this campaign: live on this CPU, with the
// shipped model ranking simulated annealing's proposals, half of each round near the heuristic
// and the best measured schedules (the demo's strategy).
Campaign network_campaign(const TuneOptions& options) {
  if (options.output.empty()) throw InputError(options.campaign, "--output", "a folder for the network's records and results");
  if ((options.budget_minutes > 0) == (options.budget_measurements > 0))
    throw InputError(options.campaign, "--budget-minutes", "exactly one of --budget-minutes M and --budget-measurements N");
  nlohmann::json budget = options.budget_minutes > 0 ? nlohmann::json{{"minutes", options.budget_minutes}}
                                                     : nlohmann::json{{"measurements", options.budget_measurements}};
  const nlohmann::json json = {
      {"name", std::filesystem::path(options.campaign).stem().string()},
      {"source", {{"network", std::filesystem::absolute(options.campaign).string()}}},
      {"backend", {{"type", "cpu"}}},
      {"model", {{"type", "learned"}}},
      {"strategy", {{"type", "annealing"}, {"anchored", {{"share", 0.5}}}}},
      {"budget", budget},
      {"allocation", options.allocation.empty() ? "gradient" : options.allocation},
      {"seed", 1},
      {"output", std::filesystem::absolute(options.output).string()}};
  return parse_campaign(json, options.campaign + " (--budget-*, --allocation)");
}

const bool registered = register_command({"tune", "Run a tuning campaign from JSON, or tune every kernel of a network; resumes from its record log",
  [](CLI::App& app) {
    auto options = std::make_shared<TuneOptions>();
    app.add_option("campaign", options->campaign,
                   "Campaign JSON (configs/campaigns/*.json), or a network: an ONNX model or a program JSON")->required();
    app.add_option("--output", options->output, "Folder for records.jsonl and summary.json / network.json (overrides the campaign's)");
    app.add_flag("--json", options->json, "Print the summary as JSON on stdout");
    app.add_option("--budget-minutes", options->budget_minutes, "A network's budget: minutes of tuning on this machine");
    app.add_option("--budget-measurements", options->budget_measurements, "A network's budget: measurements over all its kernels");
    app.add_option("--export", options->export_dir, "After tuning a network, export it there (as perftune export OUTPUT --output DIR)");
    app.add_option("--allocation", options->allocation, "How a network's budget is shared: gradient (Ansor's task scheduler) or equal");
    // One thread by default, as in `perftune train`: search already scores from TBB's threads, and
    // libtorch's OpenMP workers on top of them spend most of a learned campaign's CPU spinning in
    // libgomp's barriers (a profile shows it).
    app.add_option("--threads", options->threads, "libtorch intra-op threads (0: one per core)")->capture_default_str();
    app.callback([options] {
      configure_torch_threads(options->threads);
      const TuneInput input = read_tune_input(options->campaign);
      if (!input.network && (options->budget_minutes > 0 || options->budget_measurements > 0 || !options->allocation.empty()))
        throw InputError(options->campaign, "--budget-*", "a network (ONNX model or program JSON) for --budget-minutes, "
                                                          "--budget-measurements and --allocation; a campaign sets its own \"budget\"");
      const Campaign campaign = input.network ? network_campaign(*options) : parse_campaign(input.campaign, options->campaign);
      if (!options->export_dir.empty() && campaign.source.network.empty())
        throw InputError(options->campaign, "--export", "a network to export; this campaign tunes one kernel");
      // Under mpirun each rank owns one device: rank 0 tunes, spreading every batch over them all.
      Ranks& ranks = process_ranks();
      if (ranks.rank() > 0) return serve_campaign(campaign, ranks);
      auto spread = [&ranks](std::unique_ptr<Backend> local) -> std::unique_ptr<Backend> {
        return std::make_unique<RankSpreadBackend>(std::move(local), ranks);
      };
      const std::string output = options->output.empty() ? campaign.output : options->output;
      if (!campaign.source.network.empty()) {
        NetworkTuneOptions run_options;
        if (ranks.size() > 1) run_options.wrap_device = spread;
        run_options.output = output;
        run_options.progress = &std::cerr;
        const auto summary = tune_network(campaign, run_options);
        stop_serving(ranks);
        if (!options->export_dir.empty()) {
          const auto tuning = export_network(output, options->export_dir);
          std::cerr << "[tune] exported " << tuning["library"].get<std::string>() << " (tuning.json and example/ beside it)" << std::endl;
        }
        if (options->json) return print_json(summary.dump(2));
        std::cout << summary["network"].get<std::string>() << ": estimated latency " << summary["latency_seconds"].dump()
                  << " s (heuristic schedules " << summary["heuristic_latency_seconds"].dump() << " s, speedup "
                  << summary["speedup_over_heuristic"].dump() << ") after " << summary["measurements"].dump() << " measurements, "
                  << summary["tuning_seconds"].dump() << " s of tuning\nresults in " << output << "/network.json, records in "
                  << output << "/records.jsonl\n";
        return;
      }
      CampaignRunOptions run_options;
      if (ranks.size() > 1) run_options.wrap_device = spread;
      run_options.output = options->output;
      run_options.progress = &std::cerr;
      const auto summary = run_campaign(campaign, run_options);
      stop_serving(ranks);
      if (options->json) return print_json(to_json(summary).dump(2));
      const auto text = [](const std::optional<double>& value) { return optional_number(value).dump(); };
      const std::optional<double> speedup = summary.tuning ? summary.tuning->speedup_over_default : std::nullopt;
      std::cout << "best " << text(summary.best_seconds) << " s after " << summary.measurements << " measurements ("
                << text(summary.hardware_seconds) << " hardware seconds); default " << text(summary.default_seconds)
                << " s; speedup over default " << text(speedup) << "\nbest config "
                << (summary.tuning ? summary.tuning->best_config.dump() : std::string("null")) << "\nrecords in " << output
                << "/records.jsonl, summary in " << output << "/summary.json\n";
    });
  }});

}  // namespace
}  // namespace perftune::cli
