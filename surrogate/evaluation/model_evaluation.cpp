#include "surrogate/evaluation/model_evaluation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "surrogate/evaluation/ranking_metrics.h"

namespace perftune {

std::vector<std::size_t> ok_indices(std::span<const Measurement> measurements) {
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < measurements.size(); ++i)
    if (measurements[i].result.ok() && measurements[i].result.seconds > 0) ok.push_back(i);
  return ok;
}

OkConfigs ok_configs(const MeasuredKernel& kernel) {
  OkConfigs ok;
  for (std::size_t i : ok_indices(kernel.measurements)) {
    ok.configs.push_back(kernel.measurements[i].config);
    ok.seconds.push_back(kernel.measurements[i].result.seconds);
  }
  return ok;
}

namespace {

constexpr double kNotApplicable = std::numeric_limits<double>::quiet_NaN();

nlohmann::ordered_json number_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

std::string cell(double value, bool percent) {
  if (!std::isfinite(value)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, percent ? "%.2f%%" : "%.3f", percent ? 100.0 * value : value);
  return text;
}

}  // namespace

std::vector<double> predict_seconds(CostModel& model, const MeasuredKernel& kernel, std::span<const Config> configs) {
  std::vector<float> log_seconds(configs.size());
  model.predict(kernel.kernel, *kernel.space, configs, log_seconds);
  std::vector<double> seconds(log_seconds.size());
  for (std::size_t i = 0; i < seconds.size(); ++i) seconds[i] = std::exp(static_cast<double>(log_seconds[i]));
  return seconds;
}

std::optional<ModelScores> score_cost_model(CostModel& model, const MeasuredKernel& kernel) {
  const OkConfigs ok = ok_configs(kernel);
  if (ok.configs.size() < 2 || !kernel.space) return std::nullopt;
  const std::vector<double> predicted = predict_seconds(model, kernel, ok.configs);
  ModelScores s;
  s.kendall_tau = kendall_tau(predicted, ok.seconds);
  s.top1_slowdown = top_k_slowdown(predicted, ok.seconds, 1);
  s.top5_slowdown = top_k_slowdown(predicted, ok.seconds, 5);
  s.top10_slowdown = top_k_slowdown(predicted, ok.seconds, 10);
  s.mape = model.predicts_absolute_time() ? mean_absolute_percentage_error(predicted, ok.seconds) : kNotApplicable;
  return s;
}

std::optional<ModelScores> score_default(const MeasuredKernel& kernel) {
  if (!kernel.default_index || *kernel.default_index >= kernel.measurements.size()) return std::nullopt;
  const Measurement& chosen = kernel.measurements[*kernel.default_index];
  const auto best = kernel.best_index();
  if (!chosen.result.ok() || !best) return std::nullopt;
  const double fastest = kernel.measurements[*best].result.seconds;
  return ModelScores{kNotApplicable, (chosen.result.seconds - fastest) / fastest, kNotApplicable, kNotApplicable, kNotApplicable};
}

std::optional<ModelScores> score_reference(const MeasuredKernel& kernel, const std::string& name) {
  const auto it = kernel.references.find(name);
  const auto best = kernel.best_index();
  if (it == kernel.references.end() || !best) return std::nullopt;
  const double fastest = kernel.measurements[*best].result.seconds;
  return ModelScores{kNotApplicable, (it->second - fastest) / fastest, kNotApplicable, kNotApplicable, kNotApplicable};
}

PickComparison compare_picks(const EvaluationTable& table, const std::string& task, const std::string& model,
                             const std::string& reference, double tolerance, const std::string& source) {
  PickComparison out{model, reference, 0, 0, source};
  for (const KernelRow& row : table.rows) {
    if (row.task != task || (!source.empty() && row.source != source)) continue;
    const auto m = row.models.find(model), r = row.models.find(reference);
    if (m == row.models.end() || r == row.models.end()) continue;
    if (!std::isfinite(m->second.top1_slowdown) || !std::isfinite(r->second.top1_slowdown)) continue;
    ++out.rows;
    if (1 + m->second.top1_slowdown <= (1 + tolerance) * (1 + r->second.top1_slowdown)) ++out.within;
  }
  return out;
}

std::vector<std::pair<std::string, PickComparison>> reference_comparisons(const EvaluationTable& table) {
  std::vector<std::pair<std::string, PickComparison>> out;
  for (const std::string& task : table.tasks())
    for (const std::string& model : table.models) {
      if (model == "random" || std::find(table.references.begin(), table.references.end(), model) != table.references.end()) continue;
      for (const std::string& reference : table.references) {
        std::vector<std::string> sources = table.sources();
        sources.insert(sources.begin(), "");
        for (const std::string& source : sources)
          if (const PickComparison c = compare_picks(table, task, model, reference, kPickTolerance, source); c.rows > 0)
            out.emplace_back(task, c);
      }
    }
  return out;
}

std::optional<ModelScores> score_random(const MeasuredKernel& kernel) {
  std::vector<double> seconds = ok_configs(kernel).seconds;
  if (seconds.size() < 2) return std::nullopt;
  std::sort(seconds.begin(), seconds.end());
  const double best = seconds.front();
  const std::size_t n = seconds.size();
  // P(the best of k draws is the i-th fastest, 0-based) = C(n-1-i, k-1) / C(n, k).
  auto expected = [&](std::size_t k) {
    k = std::min(k, n);
    const double log_total = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
    double sum = 0.0;
    for (std::size_t i = 0; i + k <= n; ++i) {
      const double m = static_cast<double>(n - 1 - i);
      const double log_ways = std::lgamma(m + 1.0) - std::lgamma(static_cast<double>(k)) - std::lgamma(m - k + 2.0);
      sum += std::exp(log_ways - log_total) * (seconds[i] - best) / best;
    }
    return sum;
  };
  return ModelScores{0.0, expected(1), expected(5), expected(10), kNotApplicable};
}

std::vector<std::string> EvaluationTable::tasks() const {
  std::vector<std::string> out;
  for (const char* task : {"tile", "fusion"})
    if (std::any_of(rows.begin(), rows.end(), [&](const KernelRow& row) { return row.task == task; })) out.push_back(task);
  return out;
}

std::vector<std::string> EvaluationTable::sources() const {
  std::vector<std::string> out;
  for (const KernelRow& row : rows)
    if (std::find(out.begin(), out.end(), row.source) == out.end()) out.push_back(row.source);
  if (out.size() < 2) out.clear();
  return out;
}

std::map<std::string, ModelScores> EvaluationTable::averages(const std::string& task, const std::string& source) const {
  std::map<std::string, ModelScores> out;
  for (const std::string& name : models) {
    double sums[5] = {0, 0, 0, 0, 0};
    std::size_t counts[5] = {0, 0, 0, 0, 0};
    for (const KernelRow& row : rows) {
      if (row.task != task || (!source.empty() && row.source != source)) continue;
      const auto it = row.models.find(name);
      if (it == row.models.end()) continue;
      const double values[5] = {it->second.kendall_tau, it->second.top1_slowdown, it->second.top5_slowdown,
                                it->second.top10_slowdown, it->second.mape};
      for (int i = 0; i < 5; ++i)
        if (std::isfinite(values[i])) {
          sums[i] += values[i];
          ++counts[i];
        }
    }
    auto mean = [&](int i) { return counts[i] ? sums[i] / static_cast<double>(counts[i]) : kNotApplicable; };
    out[name] = ModelScores{mean(0), mean(1), mean(2), mean(3), mean(4)};
  }
  return out;
}

std::string format_scores_header() {
  char line[128];
  std::snprintf(line, sizeof line, "%-28s %8s %9s %9s %9s %9s\n", "model", "tau", "top-1", "top-5", "top-10", "MAPE");
  return line;
}

std::string format_scores_row(const std::string& label, const ModelScores& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %8s %9s %9s %9s %9s\n", label.c_str(), cell(s.kendall_tau, false).c_str(),
                cell(s.top1_slowdown, true).c_str(), cell(s.top5_slowdown, true).c_str(), cell(s.top10_slowdown, true).c_str(),
                cell(s.mape, true).c_str());
  return line;
}

std::string format_table(const EvaluationTable& table, bool per_kernel) {
  std::string out;
  char line[256];
  const auto add_row = [&](const std::string& label, const ModelScores& s) { out += format_scores_row(label, s); };
  const std::string header = format_scores_header();
  if (per_kernel) {
    for (const KernelRow& row : table.rows) {
      std::snprintf(line, sizeof line, "%s %s (%s), %zu configs\n", row.task == "tile" ? "kernel" : "program (fusion)",
                    row.kernel.c_str(), row.device.c_str(), row.configs);
      out += line;
      out += header;
      for (const std::string& name : table.models)
        if (row.models.count(name)) add_row("  " + name, row.models.at(name));
    }
    out += "\n";
  }
  for (const std::string& task : table.tasks()) {
    const auto count = std::count_if(table.rows.begin(), table.rows.end(), [&](const KernelRow& r) { return r.task == task; });
    std::snprintf(line, sizeof line, "%s task: average over %zu held-out %s\n", task.c_str(), static_cast<std::size_t>(count),
                  task == "tile" ? "kernels" : "programs (runtime = sum of predicted kernel runtimes)");
    out += line;
    out += header;
    const auto averages = table.averages(task);
    for (const std::string& name : table.models) add_row(name, averages.at(name));
    for (const std::string& source : table.sources()) {
      const auto of_source = table.averages(task, source);
      if (std::none_of(table.rows.begin(), table.rows.end(), [&](const KernelRow& r) { return r.task == task && r.source == source; }))
        continue;
      out += "  of " + source + "\n";
      for (const std::string& name : table.models) add_row("  " + name, of_source.at(name));
    }
  }
  for (const auto& [task, c] : reference_comparisons(table)) {
    std::snprintf(line, sizeof line, "%s task: %s's first pick within %.0f%% of %s's or faster on %zu of %zu (%.0f%%)",
                  task.c_str(), c.model.c_str(), 100 * kPickTolerance, c.reference.c_str(), c.within, c.rows,
                  100.0 * static_cast<double>(c.within) / static_cast<double>(c.rows));
    out += line + (c.source.empty() ? std::string() : " of " + c.source) + "\n";
  }
  return out;
}

nlohmann::ordered_json scores_json(const ModelScores& s) {
  return {{"kendall_tau", number_or_null(s.kendall_tau)},
          {"top1_slowdown", number_or_null(s.top1_slowdown)},
          {"top5_slowdown", number_or_null(s.top5_slowdown)},
          {"top10_slowdown", number_or_null(s.top10_slowdown)},
          {"mape", number_or_null(s.mape)}};
}

nlohmann::ordered_json to_json(const EvaluationTable& table) {
  nlohmann::ordered_json json;
  json["models"] = nlohmann::ordered_json::object();
  json["tasks"] = nlohmann::ordered_json::object();
  const auto tasks = table.tasks();
  for (const std::string& task : tasks) {
    const auto averages = table.averages(task);
    nlohmann::ordered_json models = nlohmann::ordered_json::object();
    for (const std::string& name : table.models) models[name] = scores_json(averages.at(name));
    json["tasks"][task] = models;
    if (task == tasks.front()) json["models"] = models;
  }
  const auto sources = table.sources();
  if (!sources.empty()) json["by_source"] = nlohmann::ordered_json::object();
  for (const std::string& source : sources)
    for (const std::string& task : tasks) {
      if (std::none_of(table.rows.begin(), table.rows.end(), [&](const KernelRow& r) { return r.task == task && r.source == source; }))
        continue;
      const auto averages = table.averages(task, source);
      for (const std::string& name : table.models) json["by_source"][source][task][name] = scores_json(averages.at(name));
    }
  json["kernels"] = nlohmann::ordered_json::array();
  for (const KernelRow& row : table.rows) {
    nlohmann::ordered_json r{{"task", row.task}, {"kernel", row.kernel}, {"device", row.device}, {"configs", row.configs}};
    r["models"] = nlohmann::ordered_json::object();
    for (const std::string& name : table.models)
      if (row.models.count(name)) r["models"][name] = scores_json(row.models.at(name));
    json["kernels"].push_back(r);
  }
  json["picks_vs_references"] = nlohmann::ordered_json::array();
  for (const auto& [task, c] : reference_comparisons(table))
    json["picks_vs_references"].push_back(
        {{"task", task}, {"model", c.model}, {"reference", c.reference}, {"tolerance", kPickTolerance}, {"within", c.within}, {"rows", c.rows},
         {"source", c.source.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(c.source)}});
  return json;
}

}  // namespace perftune
