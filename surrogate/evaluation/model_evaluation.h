#pragma once
// Scores models on held-out kernels: Kendall's tau within each kernel, top-K slowdown for
// K = 1, 5, 10, and MAPE of absolute predictions, averaged over kernels (ranking_metrics.h).
// Only successful measurements are scored. NaN means "does not apply" (printed as n/a, null in JSON).
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/corpus.h"
#include "surrogate/cost_model.h"

namespace perftune {

struct ModelScores {
  double kendall_tau = 0.0, top1_slowdown = 0.0, top5_slowdown = 0.0, top10_slowdown = 0.0, mape = 0.0;
};

struct KernelRow {
  std::string task = "tile";  // "tile": one kernel's configs; "fusion": a program's fusion configs
  std::string kernel, device;
  std::size_t configs = 0;  // successful measurements scored
  std::map<std::string, ModelScores> models;
  std::string source;  // the test source's file name, for averages per source; may be empty
};

struct EvaluationTable {
  std::vector<std::string> models;  // column order
  std::vector<std::string> references;  // the columns that are references (score_reference), not models
  std::vector<KernelRow> rows;
  // Per model, the mean over the task's rows of each finite score (only `source`'s rows if given).
  std::map<std::string, ModelScores> averages(const std::string& task = "tile", const std::string& source = "") const;
  std::vector<std::string> tasks() const;  // tasks present, "tile" first
  // The rows' sources in first-seen order, where there are several (a study testing on two corpora
  // reports each apart as well); else empty.
  std::vector<std::string> sources() const;
};

// The positions of the successful measurements (ok, positive time): the only ones training uses
// and any metric scores.
std::vector<std::size_t> ok_indices(std::span<const Measurement> measurements);
// A kernel's successful measurements, in recorded order.
struct OkConfigs {
  std::vector<Config> configs;
  std::vector<double> seconds;
};
OkConfigs ok_configs(const MeasuredKernel& kernel);

// The model's predicted runtime of each config (exp of its log seconds; a score on some other scale
// for a model that only ranks).
std::vector<double> predict_seconds(CostModel& model, const MeasuredKernel& kernel, std::span<const Config> configs);
// A cost model's predictions for every successful config of the kernel; nullopt if it has fewer than 2.
std::optional<ModelScores> score_cost_model(CostModel& model, const MeasuredKernel& kernel);
// The source's default config (XLA's own pick in TPU data, the space's default in Kernel Tuner
// spaces; scored as "default"): top-K slowdown is the default's slowdown for K = 1 (tau, K > 1, MAPE n/a);
// nullopt if the source recorded no default or it failed.
std::optional<ModelScores> score_default(const MeasuredKernel& kernel);
// A reference's runtime (MeasuredKernel::references[name]) as a pick: its top-1 slowdown against
// the best measured config, negative when it is faster than all of them; nullopt if absent.
std::optional<ModelScores> score_reference(const MeasuredKernel& kernel, const std::string& name);
// Expected scores of a uniformly random order: tau 0; top-K from the exact distribution of the
// best of K draws without replacement; MAPE n/a.
std::optional<ModelScores> score_random(const MeasuredKernel& kernel);

// Of the task's rows scored by both, how many have `model`'s first pick within `tolerance` of
// `reference`'s runtime or faster ((1 + top-1 slowdown) <= (1 + tolerance) x (1 + reference's)).
struct PickComparison {
  std::string model, reference;
  std::size_t within = 0, rows = 0;
  std::string source;  // only this test source's rows; empty: all
};
PickComparison compare_picks(const EvaluationTable& table, const std::string& task, const std::string& model,
                             const std::string& reference, double tolerance, const std::string& source = "");
// Every model column but random against every reference, within 5%, per task, over all rows and
// then per test source where there are several (format_table and to_json report them).
inline constexpr double kPickTolerance = 0.05;
std::vector<std::pair<std::string, PickComparison>> reference_comparisons(const EvaluationTable& table);

std::string format_table(const EvaluationTable& table, bool per_kernel);
// format_table's column header and one row of it (tau to 3 places, the rest in percent, n/a for NaN).
std::string format_scores_header();
std::string format_scores_row(const std::string& label, const ModelScores& scores);
// {"models": {NAME: {"kendall_tau", "top1_slowdown", "top5_slowdown", "top10_slowdown", "mape"}},
//  "tasks": {"tile": {NAME: {...}}, "fusion": {...}},
//  "by_source": {SOURCE: {"tile": {NAME: {...}}, ...}}   (only with several test sources)
//  "kernels": [{"task", "kernel", "device", "configs", "models": {NAME: {...}}}]}
// "models" holds the tile task's averages (the fusion task's when there is no tile row).
nlohmann::ordered_json to_json(const EvaluationTable& table);
// One model's scores as to_json writes them (null for NaN).
nlohmann::ordered_json scores_json(const ModelScores& scores);

}  // namespace perftune
