// analytical_report: how well the analytical model ranks real measured tiles.
//
//   build/bench/analytical_report [--data FILE] [--spec FILE]... [--json]
//
// For every kernel of a measured source (default: the TPU tile data, tpu/op_tuning_data.pb under
// the shared data folder) it prints Kendall's tau between the model's order and the measured one,
// the slowdown of the model's top-1 pick against the best measured config, and the same slowdown
// for the source's default pick (XLA's own choice on TPU). When the model predicts the same time
// for several configs (the data's only knobs are ones it does not read) the top-1 slowdown is the
// mean over the tied configs, not a lucky first position. Each --spec adds a device (default: the
// three shipped TPU specs, first one printed per kernel). Last, the fusion task at program scale:
// the TPU training step of module_tuning_data_layout.pb scored unfused and greedily fused.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/data_path.h"
#include "ir/device_spec.h"
#include "ir/fusion.h"
#include "ir/knob_roles.h"
#include "ir/source.h"
#include "surrogate/analytical/analytical_model.h"
#include "surrogate/evaluation/ranking_metrics.h"

namespace {

using namespace perftune;

struct KernelRow {
  std::string name;
  std::size_t configs = 0;
  std::size_t distinct_predictions = 0;
  std::size_t infeasible = 0;
  double tau = 0.0;
  double top1 = 0.0;          // model's pick, ties averaged
  double default_slowdown = NAN;
  double predict_seconds = 0.0;  // wall time of the one batched predict() call
};

KernelRow evaluate_kernel(AnalyticalModel& model, const MeasuredKernel& measured) {
  KernelRow row;
  row.name = measured.kernel.name();
  std::vector<Config> configs;
  std::vector<double> seconds;
  std::optional<double> default_seconds;
  for (std::size_t i = 0; i < measured.measurements.size(); ++i) {
    const Measurement& m = measured.measurements[i];
    if (!m.result.ok()) continue;
    configs.push_back(m.config);
    seconds.push_back(m.result.seconds);
    if (measured.default_index && *measured.default_index == i) default_seconds = m.result.seconds;
  }
  row.configs = configs.size();
  if (configs.empty()) return row;
  std::vector<float> log_seconds(configs.size());
  const auto start = std::chrono::steady_clock::now();
  model.predict(measured.kernel, *measured.space, configs, log_seconds);
  row.predict_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> predicted(log_seconds.begin(), log_seconds.end());
  std::vector<double> sorted = predicted;
  std::sort(sorted.begin(), sorted.end());
  row.distinct_predictions = static_cast<std::size_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
  for (double p : predicted) row.infeasible += p >= std::log(kInfeasibleSeconds) ? 1 : 0;
  row.tau = kendall_tau(predicted, seconds);
  const double best = *std::min_element(seconds.begin(), seconds.end());
  const double lowest = sorted.front();
  double tied_sum = 0.0;
  std::size_t tied = 0;
  for (std::size_t i = 0; i < predicted.size(); ++i)
    if (predicted[i] == lowest) {
      tied_sum += seconds[i];
      ++tied;
    }
  row.top1 = (tied_sum / static_cast<double>(tied) - best) / best;
  if (default_seconds) row.default_slowdown = (*default_seconds - best) / best;
  return row;
}

// Mean over kernels; `distinguishing_only` keeps kernels where the model predicts at least two
// different times (the others have only knobs it does not read, so its pick there is luck).
double mean_of(const std::vector<KernelRow>& rows, double KernelRow::*field, bool distinguishing_only = false) {
  double sum = 0.0;
  std::size_t n = 0;
  for (const KernelRow& row : rows)
    if (!std::isnan(row.*field) && (!distinguishing_only || row.distinct_predictions > 1)) {
      sum += row.*field;
      ++n;
    }
  return n == 0 ? NAN : sum / static_cast<double>(n);
}

// The fusion task at scale: the whole TPU training step (module_tuning_data_layout.pb, before
// fusion) scored unfused and under XLA-like greedy elementwise fusion, against its measured
// runtime (median of its recorded layout runs; the measured program is XLA's fused one).
void report_program_fusion(const std::string& spec_path, bool json, nlohmann::ordered_json& report) {
  const auto found = find_data("tpu/module_tuning_data_layout.pb");
  if (!found) return;
  const Corpus corpus = load_source(*found);
  if (corpus.programs.empty()) return;
  const Program& program = *corpus.programs.front();
  AnalyticalModel model(load_device_spec(spec_path));
  const Kernel whole(program.name(), program);
  std::vector<Knob> knobs;
  for (std::size_t edge : fusible_edges(program)) knobs.push_back({fuse_knob(edge), {0, 1}});
  const SearchSpace space(knobs);
  const FusionConfig greedy = FusionConfig::greedy_elementwise(program);
  std::vector<Config> configs(2);
  for (std::size_t k = 0; k < knobs.size(); ++k) {
    const std::size_t edge = knob_role(knobs[k].name).index;
    configs[0].values.push_back(0);
    configs[1].values.push_back(greedy.fused[edge] ? 1 : 0);
  }
  std::vector<float> log_seconds(configs.size());
  const auto start = std::chrono::steady_clock::now();
  model.predict(whole, space, configs, log_seconds);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> measured;
  for (const Measurement& m : corpus.program_measurements)
    if (m.result.ok()) measured.push_back(m.result.seconds);
  std::sort(measured.begin(), measured.end());
  const double median = measured.empty() ? NAN : measured[measured.size() / 2];
  nlohmann::ordered_json entry = {{"program", program.name()}, {"fusible_edges", knobs.size()},
                                  {"predicted_unfused_seconds", std::exp(log_seconds[0])},
                                  {"predicted_greedy_fused_seconds", std::exp(log_seconds[1])},
                                  {"measured_median_seconds", median}, {"predict_seconds", seconds}};
  report["program_fusion"] = entry;
  if (json) return;
  std::printf("\nfusion task, %s (%zu fusible edges), spec %s\n", program.name().c_str(), knobs.size(), spec_path.c_str());
  std::printf("predicted unfused %.3f ms, greedy elementwise fusion %.3f ms; measured (XLA-fused, median of %zu runs) %.3f ms; "
              "2 configs scored in %.2f s\n",
              1e3 * std::exp(log_seconds[0]), 1e3 * std::exp(log_seconds[1]), measured.size(), 1e3 * median, seconds);
}

}  // namespace

int main(int argc, char** argv) {
  std::string data;
  std::vector<std::string> specs;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--data" && i + 1 < argc) data = argv[++i];
    else if (arg == "--spec" && i + 1 < argc) specs.push_back(argv[++i]);
    else if (arg == "--json") json = true;
    else {
      std::cerr << "usage: analytical_report [--data FILE] [--spec FILE]... [--json]\n";
      return 2;
    }
  }
  try {
    if (data.empty()) {
      const auto found = find_data("tpu/op_tuning_data.pb");
      if (!found) {
        std::cerr << "analytical_report: tpu/op_tuning_data.pb not found under " << data_dir() << " (set PERFTUNE_DATA)\n";
        return 1;
      }
      data = *found;
    }
    if (specs.empty()) specs = {"configs/hardware/tpu_v3.json", "configs/hardware/tpu_v2.json", "configs/hardware/tpu_v4.json"};
    const Corpus corpus = load_source(data);
    nlohmann::ordered_json report;
    report["data"] = data;
    for (std::size_t s = 0; s < specs.size(); ++s) {
      AnalyticalModel model(load_device_spec(specs[s]));
      std::vector<KernelRow> rows;
      for (const MeasuredKernel& kernel : corpus.kernels) rows.push_back(evaluate_kernel(model, kernel));
      nlohmann::ordered_json device;
      device["spec"] = specs[s];
      for (const KernelRow& row : rows)
        device["kernels"].push_back({{"kernel", row.name}, {"configs", row.configs},
                                     {"distinct_predictions", row.distinct_predictions},
                                     {"infeasible", row.infeasible}, {"kendall_tau", row.tau},
                                     {"top1_slowdown", row.top1}, {"default_slowdown", row.default_slowdown}});
      device["mean_kendall_tau"] = mean_of(rows, &KernelRow::tau);
      device["mean_top1_slowdown"] = mean_of(rows, &KernelRow::top1);
      device["mean_default_slowdown"] = mean_of(rows, &KernelRow::default_slowdown);
      device["distinguishing_kernels"] = std::count_if(rows.begin(), rows.end(), [](const KernelRow& r) { return r.distinct_predictions > 1; });
      device["distinguishing_mean_kendall_tau"] = mean_of(rows, &KernelRow::tau, true);
      device["distinguishing_mean_top1_slowdown"] = mean_of(rows, &KernelRow::top1, true);
      device["distinguishing_mean_default_slowdown"] = mean_of(rows, &KernelRow::default_slowdown, true);
      double predict_seconds = 0.0;
      std::size_t predicted = 0;
      for (const KernelRow& row : rows) {
        predict_seconds += row.predict_seconds;
        predicted += row.configs;
      }
      device["configs_per_second"] = predict_seconds > 0 ? static_cast<double>(predicted) / predict_seconds : 0.0;
      report["devices"].push_back(device);
      if (json) continue;
      std::printf("\nanalytical model, spec %s, data %s\n", specs[s].c_str(), data.c_str());
      if (s == 0) {
        std::printf("%-12s %7s %9s %6s %8s %10s %10s\n", "kernel", "configs", "distinct", "infeas",
                    "tau", "top1_slow", "xla_slow");
        for (const KernelRow& row : rows)
          std::printf("%-12s %7zu %9zu %6zu %8.3f %9.1f%% %9.1f%%\n", row.name.c_str(), row.configs,
                      row.distinct_predictions, row.infeasible, row.tau, 100.0 * row.top1,
                      100.0 * row.default_slowdown);
      }
      std::printf("%-12s %7zu %9s %6s %8.3f %9.1f%% %9.1f%%\n", "MEAN", rows.size(), "", "",
                  mean_of(rows, &KernelRow::tau), 100.0 * mean_of(rows, &KernelRow::top1),
                  100.0 * mean_of(rows, &KernelRow::default_slowdown));
      std::printf("%-12s %7lld %9s %6s %8.3f %9.1f%% %9.1f%%   (kernels with >1 distinct prediction)\n", "MEAN-TILED",
                  static_cast<long long>(device["distinguishing_kernels"].get<std::int64_t>()), "", "",
                  mean_of(rows, &KernelRow::tau, true), 100.0 * mean_of(rows, &KernelRow::top1, true),
                  100.0 * mean_of(rows, &KernelRow::default_slowdown, true));
      std::printf("prediction speed: %.0f configs/s (batched predict, one call per kernel)\n",
                  device["configs_per_second"].get<double>());
    }
    report_program_fusion(specs.front(), json, report);
    if (json) std::cout << report.dump(2) << "\n";
  } catch (const std::exception& error) {
    std::cerr << "analytical_report: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
