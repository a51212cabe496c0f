// perftune experiment EXPERIMENT.json [--jobs N] [--output DIR] [--seeds N] [--first-seed N]
//                                      [--stop-after SECONDS] [--no-plots] [--json]:
// run many campaigns (strategies x spaces x seeds) and write curves, a summary and plots; or, for a
// model study (a file with "studies"), every eval config's tables, predictions and plots. Under
// `mpirun -n N` the runs are divided among the N processes (docs/scaling.md).
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/command.h"
#include "cli/cpu_tiling.h"
#include "distributed/ranks.h"
#include "experiments/experiment.h"
#include "experiments/experiment_runner.h"
#include "experiments/live/scheduler_comparison.h"
#include "experiments/model_study/model_study.h"
#include "experiments/scoring/optimum_noise.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "offline/machine_check.h"
#include "surrogate/training/torch_threads.h"

namespace perftune::cli {
namespace {

struct ExperimentCliOptions {
  std::string experiment;
  std::string output;
  std::size_t jobs = 0;
  std::size_t seeds = 0;
  std::uint64_t first_seed = 0;
  double stop_after_seconds = 0;
  bool no_plots = false;
  bool json = false;
};

// The model-study mode: the studies run one after the other (each trains with one thread, as
// perftune eval does), so --jobs and --seeds do not apply.
void run_study(const nlohmann::json& json, const ExperimentCliOptions& options) {
  const ModelStudy study = parse_model_study(json, options.experiment);
  if (process_ranks().rank() != 0) return;  // under mpirun, rank 0 runs a model study alone
  if (options.seeds || options.first_seed)
    throw InputError(options.experiment, "$.studies", "no --seeds or --first-seed: a model study has no seeds");
  // One intra-op thread, as perftune eval (cli/eval.cpp says why).
  configure_torch_threads(1);
  ModelStudyOptions run_options;
  run_options.output = options.output;
  run_options.plots = !options.no_plots;
  run_options.progress = &std::cerr;
  run_options.tiling = cpu_default_tiling;
  const auto summary = run_model_study(study, run_options);
  if (options.json) {
    print_json(summary.dump(2));
    return;
  }
  std::cout << model_study_tables(summary) << "results in " << (options.output.empty() ? study.output : options.output)
            << " (summary.json, tables.md, predictions/, plots/)\n";
}

// The run settings the command line gives; the experiment's own where an option is not given.
ExperimentOptions experiment_run_options(const ExperimentCliOptions& options) {
  ExperimentOptions run_options;
  run_options.jobs = options.jobs;
  run_options.output = options.output;
  if (options.seeds) run_options.seeds = options.seeds;
  if (options.first_seed) run_options.first_seed = options.first_seed;
  if (options.stop_after_seconds > 0) run_options.stop_after_seconds = options.stop_after_seconds;
  run_options.plots = !options.no_plots;
  run_options.progress = &std::cerr;
  run_options.progress_redraws = ::isatty(2);
  run_options.ranks = &process_ranks();  // under mpirun, this rank's share of the runs
  return run_options;
}

// A sitting --stop-after ended: how far it got.
void print_stopped_early(const nlohmann::ordered_json& summary, const ExperimentCliOptions& options) {
  if (options.json) return print_json(summary.dump(2));
  std::cout << "stopped after " << options.stop_after_seconds << " s: " << summary["finished_runs"].get<std::size_t>()
            << " of " << summary["runs"].get<std::size_t>() << " runs finished"
            << (summary.contains("remeasured_spaces")
                    ? ", " + std::to_string(summary["remeasured_spaces"].get<std::size_t>()) + " live spaces re-measured"
                    : std::string())
            << "; the same command continues\n";
}

// The name column fits the longest strategy name, so a long name never runs into its score.
int strategy_name_width(const nlohmann::ordered_json& summary) {
  int name_width = 10;
  for (const auto& [name, row] : summary["strategies"].items())
    name_width = std::max(name_width, static_cast<int>(name.size()) + 2);
  return name_width;
}

// Each strategy's score, its standard error, its speedups at the budgets and its time-axis scores.
// Leaves std::cout left-aligned and fixed at 3 decimals: the tables after it print in that state.
void print_strategy_table(const nlohmann::ordered_json& summary, int name_width) {
  std::cout << std::left << std::setw(name_width) << "strategy" << std::setw(8) << "score" << std::setw(8) << "+-s.e.";
  for (const auto& [budget, value] : summary["strategies"].begin().value()["speedup_at"].items())
    std::cout << std::setw(9) << ("x@" + budget);
  // The methodology's time-axis score beside P over measurements, one column per window.
  const auto& first = summary["strategies"].begin().value();
  if (first.contains("time_score"))
    for (const auto& [window, value] : first["time_score"].items()) std::cout << std::setw(12) << ("t:" + window);
  std::cout << "\n" << std::fixed << std::setprecision(3);
  for (const auto& [name, row] : summary["strategies"].items()) {
    std::cout << std::setw(name_width) << name;
    if (row["score"].is_null()) std::cout << std::setw(8) << "-";
    else std::cout << std::setw(8) << row["score"].get<double>();
    if (row["score_standard_error"].is_null()) std::cout << std::setw(8) << "-";
    else std::cout << std::setw(8) << row["score_standard_error"].get<double>();
    for (const auto& [budget, value] : row["speedup_at"].items()) std::cout << std::setw(9) << value.get<double>();
    if (row.contains("time_score"))
      for (const auto& [window, value] : row["time_score"].items()) {
        if (value.is_null()) std::cout << std::setw(12) << "-";
        else std::cout << std::setw(12) << value.get<double>();
      }
    std::cout << "\n";
  }
}

// Live spaces: each strategy against the fastest of the platform's own schedulers, on the runs'
// own figures and, where re-measured, on the picks and peers measured again side by side.
void print_scheduler_table(const nlohmann::ordered_json& summary, int name_width, const std::string& key, const std::string& title) {
  const nlohmann::ordered_json* header = nullptr;  // a strategy without measured picks has no row
  for (const auto& [name, row] : summary["strategies"].items())
    if (!header && row.contains(key) && !row[key].empty()) header = &row[key];
  if (!header) return;
  std::cout << "\n" << title << " (> 1: faster; geometric mean, spaces at >= " << std::defaultfloat << kKeepsUpWithScheduler
            << "x of it)\n"
            << std::setw(name_width) << "strategy";
  for (const auto& [budget, value] : header->items()) std::cout << std::setw(14) << ("@" + budget);
  std::cout << "\n";
  for (const auto& [name, row] : summary["strategies"].items()) {
    if (!row.contains(key)) continue;
    std::cout << std::setw(name_width) << name;
    for (const auto& [budget, cell] : row[key].items()) {
      std::ostringstream text;
      text << std::fixed << std::setprecision(2) << cell["geomean"].get<double>() << " ("
           << cell["spaces_keeping_up"].get<std::size_t>() << "/" << cell["spaces"].get<std::size_t>() << ")";
      std::cout << std::setw(14) << text.str();
    }
    std::cout << "\n";
  }
}

// Live spaces re-measured: P again with every pick and the optimum at fresh measurements.
void print_remeasured_scores(const nlohmann::ordered_json& summary, int name_width) {
  const auto& first = summary["strategies"].begin().value();
  if (!first.contains("remeasured_score_at")) return;
  std::cout << "\nP on re-measured picks (each run's best and the fastest configs measured again; mean over live spaces)\n"
            << std::setw(name_width) << "strategy" << std::setw(9) << "score";
  for (const auto& [budget, value] : first["remeasured_score_at"].items()) std::cout << std::setw(9) << ("P@" + budget);
  std::cout << "\n";
  const auto cell = [](const nlohmann::ordered_json& value) {
    std::ostringstream text;
    if (value.is_null()) text << "-";
    else text << std::fixed << std::setprecision(2) << value.get<double>();
    return text.str();
  };
  for (const auto& [name, row] : summary["strategies"].items()) {
    std::cout << std::setw(name_width) << name << std::setw(9) << cell(row["remeasured_score"]);
    for (const auto& [budget, value] : row["remeasured_score_at"].items()) std::cout << std::setw(9) << cell(value);
    std::cout << "\n";
  }
  if (summary.contains("remeasured_noise_ceiling")) {  // the best one figure per config can tell
    const auto& ceiling = summary["remeasured_noise_ceiling"];
    std::cout << std::setw(name_width) << "(noise ceiling)" << std::setw(9) << cell(ceiling["score"]);
    for (const auto& [budget, value] : ceiling["score_at"].items()) std::cout << std::setw(9) << cell(value);
    std::cout << "\n";
  }
  // Where random search re-measures within the noise of the optimum, P is left out.
  std::cout << std::setw(name_width) << "(spaces scored)" << std::setw(9) << "";
  for (const auto& [budget, value] : first["remeasured_spaces_at"].items()) {
    std::size_t most = 0;
    for (const auto& [name, row] : summary["strategies"].items()) most = std::max(most, row["remeasured_spaces_at"][budget].get<std::size_t>());
    std::cout << std::setw(9) << most;
  }
  std::cout << "\n";
}

// Which machine each sitting measured on: sittings whose checks differ do not compare.
void print_machine_checks(const nlohmann::ordered_json& summary) {
  if (!summary.contains("machine_checks") || summary["machine_checks"].empty()) return;
  std::cout << "\nmachine checks (before each sitting's first measurement and its re-measure's)\n";
  for (const auto& check : summary["machine_checks"]) {
    const auto when = static_cast<std::time_t>(check["unix_time"].get<double>());
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&when));
    std::cout << "  " << date << "  " << std::left << std::setw(10) << check["phase"].get<std::string>() << std::right
              << describe(check) << "\n";
  }
  if (const auto warning = machines_differ(summary["machine_checks"])) std::cout << "  warning: " << *warning << "\n";
}

// Where the recording cannot rank its optimum, P's last percent measures noise: say where.
void print_optimum_ties(const nlohmann::ordered_json& summary) {
  std::ostringstream ties;
  ties << std::fixed << std::setprecision(2);
  for (const auto& space : summary["spaces"]) {
    const auto& noise = space["optimum_noise"];
    if (noise.is_null() || noise["tied_configs"].get<std::size_t>() < 2) continue;
    ties << (ties.tellp() > 0 ? ", " : "") << space["name"].get<std::string>() << " "
         << noise["tied_configs"].get<std::size_t>() << " (s.e. " << 100 * noise["relative_standard_error"].get<double>()
         << "%)";
  }
  if (ties.tellp() > 0)
    std::cout << "configs within " << std::defaultfloat << kTiedStandardErrors << std::fixed
              << " standard errors of the recorded optimum (P near 1 measures noise there): " << ties.str() << "\n";
}

// The campaign mode: the runs (this rank's share under mpirun), then rank 0 prints the tables. They
// share std::cout's formatting (each keeps what the ones before it set), so their order matters.
void run_campaigns(const nlohmann::json& json, const ExperimentCliOptions& options) {
  const Experiment experiment = parse_experiment(json, options.experiment);
  const auto summary = run_experiment(experiment, experiment_run_options(options));
  if (summary.is_null()) return;  // another rank than 0: rank 0 reports
  if (summary.value("stopped_early", false)) return print_stopped_early(summary, options);
  if (options.json) {
    print_json(nlohmann::ordered_json{{"experiment", summary["experiment"]}, {"strategies", summary["strategies"]}}.dump(2));
    return;
  }
  const int name_width = strategy_name_width(summary);
  print_strategy_table(summary, name_width);
  print_scheduler_table(summary, name_width, "vs_fastest_scheduler",
                        "against the fastest autoscheduler of each space, on the runs' own figures");
  print_scheduler_table(summary, name_width, "vs_fastest_scheduler_remeasured",
                        "against the fastest autoscheduler of each space, picks and autoschedulers re-measured side by side");
  print_remeasured_scores(summary, name_width);
  print_machine_checks(summary);
  print_optimum_ties(summary);
  std::cout << "results in " << (options.output.empty() ? experiment.output : options.output) << " (runs.csv, summary.json, plots/)\n";
}

const bool registered = register_command({"experiment",
  "Run an experiment (strategies x spaces x seeds, or a model study of eval configs) and write its results and plots; a rerun continues",
  [](CLI::App& app) {
    auto options = std::make_shared<ExperimentCliOptions>();
    app.add_option("experiment", options->experiment, "Experiment JSON (configs/experiments/*.json)")->required();
    app.add_option("--jobs,-j", options->jobs, "Concurrent runs (default: the machine's hardware threads)");
    app.add_option("--output", options->output, "Output folder (overrides the experiment's)");
    app.add_option("--seeds", options->seeds, "Number of seeds (overrides the experiment's; e.g. 3 for a quick check)")
        ->check(CLI::PositiveNumber);
    app.add_option("--first-seed", options->first_seed, "First seed (overrides the experiment's; with --seeds N: seeds first .. first+N-1)")
        ->check(CLI::PositiveNumber);
    app.add_option("--stop-after", options->stop_after_seconds,
                   "Start no run after SECONDS (a sitting of a long live experiment; the same command continues it)")
        ->check(CLI::PositiveNumber);
    app.add_flag("--no-plots", options->no_plots, "Skip the plots (render them later with perftune plot DIR)");
    app.add_flag("--json", options->json, "Print the per-strategy table (a model study: its summary) as JSON on stdout");
    app.callback([options] {
      const nlohmann::json json = parse_json_file(options->experiment);
      if (is_model_study(json)) return run_study(json, *options);
      run_campaigns(json, *options);
    });
  }});

}  // namespace
}  // namespace perftune::cli
