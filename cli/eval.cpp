// perftune eval EVAL.json [--json] [--per-kernel] [--fusion-breakdown] [--predictions FILE] [--checkpoint MODEL] [--seeds N]: train (or load)
// the learned model and score it with the baselines on held-out kernels: Kendall's tau, top-1/5/10 slowdown,
// MAPE; with several folds (leave-one-out splits) also per fold and the mean over folds; with several
// training seeds the means over seeds and the spread of the task averages (seed_spread.h).
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cli/command.h"
#include "cli/cpu_tiling.h"
#include "surrogate/evaluation/seed_spread.h"
#include "surrogate/fusion/fusion_evaluation.h"
#include "surrogate/study/prediction_csv.h"
#include "surrogate/study/study_runner.h"
#include "surrogate/training/torch_threads.h"

namespace perftune::cli {
namespace {

// With several folds (one held-out program or kernel each): per fold and task, each model's tau
// and top-1 slowdown averaged over the fold's rows, then the mean over folds, so that each
// held-out program counts once whatever its number of kernels.
std::string format_folds(const StudyResult& result) {
  std::ostringstream out;
  out << "per fold (tau / top-1 slowdown, mean over the fold's held-out rows):\n";
  out << std::left << std::setw(28) << "fold" << std::setw(8) << "task";
  for (const std::string& model : result.table.models) out << " | " << std::setw(18) << model;
  out << "\n";
  std::map<std::string, std::map<std::string, std::pair<ModelScores, std::size_t>>> sums;  // task -> model -> (sum, folds)
  const std::vector<std::string> tasks = result.table.tasks();
  const auto cell = [](double tau, double top1) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(3);
    if (std::isnan(tau)) text << "n/a";
    else text << tau;
    text << " / " << std::setprecision(2);
    if (std::isnan(top1)) text << "n/a";
    else text << 100 * top1 << "%";
    return text.str();
  };
  for (const FoldReport& fold : result.folds) {
    const EvaluationTable table = result.fold_table(fold);
    for (const std::string& task : table.tasks()) {
      const auto averages = table.averages(task);
      out << std::setw(28) << fold.fold << std::setw(8) << task;
      for (const std::string& model : table.models) {
        const ModelScores& s = averages.at(model);
        out << " | " << std::setw(18) << cell(s.kendall_tau, s.top1_slowdown);
        if (std::isnan(s.kendall_tau) || std::isnan(s.top1_slowdown)) continue;
        auto& [sum, count] = sums[task][model];
        sum.kendall_tau += s.kendall_tau;
        sum.top1_slowdown += s.top1_slowdown;
        ++count;
      }
      out << "\n";
    }
  }
  for (const std::string& task : tasks) {
    const auto& models = sums[task];
    out << std::setw(28) << "mean over folds" << std::setw(8) << task;
    for (const std::string& model : result.table.models) {
      const auto it = models.find(model);
      const double n = it == models.end() ? 0.0 : static_cast<double>(it->second.second);
      out << " | " << std::setw(18) << (n > 0 ? cell(it->second.first.kendall_tau / n, it->second.first.top1_slowdown / n) : "n/a");
    }
    out << "\n";
  }
  return out.str();
}

// Why a model picks a fusion placement: its first pick and the fastest measured placement, each
// with its measured runtime and the kernels the model sums, predicted one by one.
std::string fusion_breakdown(const std::string& model_name, CostModel& model, const MeasuredKernel& program) {
  const auto [configs, measured] = ok_configs(program);
  if (configs.size() < 2) return "";
  const std::vector<std::vector<KernelPrediction>> kernels = predict_program_kernels(model, program, configs, cpu_default_tiling);
  const std::vector<double> predicted = program_seconds(kernels);
  const auto pick = static_cast<std::size_t>(std::min_element(predicted.begin(), predicted.end()) - predicted.begin());
  const auto best = static_cast<std::size_t>(std::min_element(measured.begin(), measured.end()) - measured.begin());
  std::ostringstream out;
  out << std::setprecision(4) << "program (fusion) " << program.kernel.name() << ", " << model_name << ": first pick "
      << 100 * (measured[pick] / measured[best] - 1) << "% slower than the fastest measured placement\n";
  for (const auto& [label, i] : {std::pair<const char*, std::size_t>{"  first pick", pick}, {"  fastest", best}}) {
    out << label << " " << program.space->to_json(configs[i]).dump() << ": measured " << 1e6 * measured[i] << " us, predicted "
        << 1e6 * predicted[i] << " us =";
    for (const KernelPrediction& kernel : kernels[i]) out << " " << kernel.name << " " << 1e6 * kernel.seconds;
    out << "\n";
  }
  return out.str();
}

struct EvalCommandOptions {
  std::string config;
  bool json = false;
  int threads = 1;
  bool per_kernel = false;
  bool fusion_breakdown = false;
  std::string predictions;
  std::string checkpoint;
  int seeds = 1;
};

// --seeds N: the study run N times with consecutive training seeds (the split stays as configured).
void print_over_seeds(StudyConfig config, const LoadedSources& sources, const EvalCommandOptions& options, std::ostream& progress) {
  std::vector<SeededTable> tables;
  double seconds = 0.0;
  const std::uint64_t first = config.train.seed;
  const int first_trees = config.trees.seed;
  for (int i = 0; i < options.seeds; ++i) {
    config.train.seed = first + static_cast<std::uint64_t>(i);
    config.trees.seed = first_trees + i;
    progress << "[eval] training seed " << config.train.seed << " (" << i + 1 << " of " << options.seeds << ")" << std::endl;
    StudyResult result = run_evaluation(config, sources, &progress, cpu_default_tiling);
    seconds += result.seconds;
    tables.push_back({config.train.seed, std::move(result.table)});
  }
  const EvaluationTable mean = mean_over_seeds(tables);
  if (options.json) {
    nlohmann::ordered_json json = to_json(mean);
    json["config"] = config.file;
    json["seconds"] = seconds;
    json.update(seed_spread_json(tables));
    print_json(json.dump(2));
    return;
  }
  std::cout << format_table(mean, options.per_kernel) << format_seed_spread(tables) << "evaluated in " << seconds << " s\n";
}

const bool registered = register_command({"eval", "Evaluate the learned model against baselines on a held-out split (EVAL.json)",
  [](CLI::App& app) {
    auto options = std::make_shared<EvalCommandOptions>();
    app.add_option("config", options->config, "EVAL.json: sources, split, model, train options, models to compare")->required();
    app.add_flag("--json", options->json, "Print {\"models\": {...}, \"kernels\": [...]} as JSON (progress goes to stderr)");
    app.add_flag("--per-kernel", options->per_kernel, "Also print a table per held-out kernel");
    app.add_flag("--fusion-breakdown", options->fusion_breakdown,
                 "Also print, per held-out program and model, its first fusion pick and the fastest placement, kernel by kernel");
    app.add_option("--predictions", options->predictions,
                   "Write FILE (CSV): per scored model, held-out kernel and config, its measured and predicted runtime "
                   "(a fusion row's as the program's sum) and the config");
    // One intra-op thread by default: kernel graphs are small, and on a shared 2-core machine
    // OpenMP's spinning barriers make a second thread many times slower, not faster (bench/gnn_bench
    // compares the two).
    app.add_option("--threads", options->threads, "libtorch intra-op threads (0: one per core)")->capture_default_str();
    app.add_option("--checkpoint", options->checkpoint,
                   "Score this trained model (perftune train's output, an experiment's runs/*/models/*.json) instead of "
                   "training one (overrides the config's \"checkpoint\")")
        ->check(CLI::ExistingFile);
    app.add_option("--seeds", options->seeds,
                   "Train and score the learned model this many times, with the config's training seed, seed + 1, ...; "
                   "print the means over seeds and the standard deviation of the task averages (per-fold tables and "
                   "--fusion-breakdown are for one seed)")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    app.callback([options] {
      configure_torch_threads(options->threads);
      StudyConfig config = StudyConfig::load(options->config);
      if (!options->checkpoint.empty()) config.checkpoint = options->checkpoint;
      if (options->seeds > 1 && config.checkpoint)
        throw std::invalid_argument("--seeds trains the learned model once per seed; " + *config.checkpoint + " is one trained model");
      if (options->seeds > 1 && options->fusion_breakdown)
        throw std::invalid_argument("--fusion-breakdown shows one trained model's picks; run it without --seeds");
      if (options->seeds > 1 && !options->predictions.empty())
        throw std::invalid_argument("--predictions writes one trained model's predictions; run it without --seeds");
      auto scores = [&](const char* model) { return std::find(config.models.begin(), config.models.end(), model) != config.models.end(); };
      if (options->seeds > 1 && !scores("learned") && !scores("trees"))
        throw std::invalid_argument("--seeds: " + config.file + " scores no learned or tree model, the only ones a training seed changes");
      const LoadedSources sources = load_sources(config);
      // Progress (per-epoch training logs) on stderr, always: stdout holds only the results table,
      // so `perftune eval ... > table.txt` gets the table alone.
      std::ostream& progress = std::cerr;
      if (options->seeds > 1) {
        print_over_seeds(config, sources, *options, progress);
        return;
      }
      std::string breakdowns;
      std::optional<PredictionWriter> predictions;
      if (!options->predictions.empty()) predictions.emplace(options->predictions, cpu_default_tiling);
      const ScoredModelObserver observer = [&](const std::string& name, CostModel& model, const MeasuredKernel& kernel) {
        if (options->fusion_breakdown && is_fusion_space(kernel)) breakdowns += fusion_breakdown(name, model, kernel);
        if (predictions) predictions->add(name, model, kernel);
      };
      const StudyResult result = run_evaluation(config, sources, &progress, cpu_default_tiling, observer);
      if (predictions) predictions->finish();
      if (options->json) {
        nlohmann::ordered_json json = to_json(result.table);
        json["config"] = config.file;
        json["seconds"] = result.seconds;
        json["folds"] = nlohmann::ordered_json::array();
        for (const FoldReport& fold : result.folds)
          json["folds"].push_back({{"fold", fold.fold}, {"train_kernels", fold.train_kernels}, {"test_kernels", fold.test_kernels},
                                   {"from_checkpoint", fold.from_checkpoint}, {"training", fold.training.to_json()},
                                   {"tasks", to_json(result.fold_table(fold))["tasks"]}});
        if (options->fusion_breakdown) json["fusion_breakdown"] = breakdowns;
        print_json(json.dump(2));
      } else {
        std::cout << format_table(result.table, options->per_kernel);
        if (result.folds.size() > 1) std::cout << format_folds(result);
        std::cout << breakdowns;
        std::cout << "evaluated in " << result.seconds << " s\n";
      }
    });
  }});

}  // namespace
}  // namespace perftune::cli
