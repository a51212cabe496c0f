#include "surrogate/evaluation/seed_spread.h"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace perftune {

namespace {

constexpr double kNotApplicable = std::numeric_limits<double>::quiet_NaN();

using Values = std::array<double, 5>;

Values values_of(const ModelScores& s) { return {s.kendall_tau, s.top1_slowdown, s.top5_slowdown, s.top10_slowdown, s.mape}; }
ModelScores scores_of(const Values& v) { return {v[0], v[1], v[2], v[3], v[4]}; }

// Each score's mean (or sample standard deviation) over the finite values of `samples`.
ModelScores reduce(const std::vector<ModelScores>& samples, bool spread) {
  Values out;
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::vector<double> finite;
    for (const ModelScores& s : samples)
      if (const double v = values_of(s)[i]; std::isfinite(v)) finite.push_back(v);
    double mean = 0.0;
    for (double v : finite) mean += v;
    mean /= static_cast<double>(finite.size());
    if (!spread) {
      out[i] = finite.empty() ? kNotApplicable : mean;
      continue;
    }
    double squares = 0.0;
    for (double v : finite) squares += (v - mean) * (v - mean);
    out[i] = finite.size() < 2 ? kNotApplicable : std::sqrt(squares / static_cast<double>(finite.size() - 1));
  }
  return scores_of(out);
}

void check_alike(const std::vector<SeededTable>& tables) {
  if (tables.empty()) throw std::invalid_argument("seed spread: no tables");
  const EvaluationTable& first = tables.front().table;
  for (const SeededTable& other : tables) {
    const EvaluationTable& t = other.table;
    bool alike = t.models == first.models && t.rows.size() == first.rows.size();
    for (std::size_t r = 0; alike && r < t.rows.size(); ++r)
      alike = t.rows[r].task == first.rows[r].task && t.rows[r].kernel == first.rows[r].kernel && t.rows[r].device == first.rows[r].device;
    if (!alike)
      throw std::invalid_argument("seed spread: seed " + std::to_string(other.seed) + " scored other rows or models than seed " +
                                  std::to_string(tables.front().seed));
  }
}

}  // namespace

EvaluationTable mean_over_seeds(const std::vector<SeededTable>& tables) {
  check_alike(tables);
  EvaluationTable mean = tables.front().table;
  for (std::size_t r = 0; r < mean.rows.size(); ++r)
    for (auto& [name, scores] : mean.rows[r].models) {
      std::vector<ModelScores> samples;
      for (const SeededTable& t : tables)
        if (const auto it = t.table.rows[r].models.find(name); it != t.table.rows[r].models.end()) samples.push_back(it->second);
      scores = reduce(samples, false);
    }
  return mean;
}

std::map<std::string, std::map<std::string, ModelScores>> spread_over_seeds(const std::vector<SeededTable>& tables) {
  check_alike(tables);
  std::map<std::string, std::map<std::string, ModelScores>> out;
  for (const std::string& task : tables.front().table.tasks()) {
    std::map<std::string, std::vector<ModelScores>> averages;  // model -> one per seed
    for (const SeededTable& t : tables)
      for (const auto& [name, scores] : t.table.averages(task)) averages[name].push_back(scores);
    for (const auto& [name, samples] : averages) out[task][name] = reduce(samples, true);
  }
  return out;
}

std::string format_seed_spread(const std::vector<SeededTable>& tables) {
  const auto spread = spread_over_seeds(tables);
  std::string seeds;
  for (const SeededTable& t : tables) seeds += (seeds.empty() ? "" : ", ") + std::to_string(t.seed);
  std::string out = "over " + std::to_string(tables.size()) + " training seeds (" + seeds +
                    "): the tables above are means; the standard deviation of the task averages:\n";
  for (const std::string& task : tables.front().table.tasks()) {
    const auto& models = spread.at(task);
    out += task + " task\n" + format_scores_header();
    for (const std::string& name : tables.front().table.models)
      if (const auto it = models.find(name); it != models.end()) out += format_scores_row(name, it->second);
  }
  return out;
}

nlohmann::ordered_json seed_spread_json(const std::vector<SeededTable>& tables) {
  nlohmann::ordered_json json;
  json["seeds"] = nlohmann::ordered_json::array();
  for (const SeededTable& t : tables) json["seeds"].push_back(t.seed);
  nlohmann::ordered_json spread = nlohmann::ordered_json::object();
  for (const auto& [task, models] : spread_over_seeds(tables))
    for (const auto& [name, scores] : models) spread[task][name] = scores_json(scores);
  json["spread"] = std::move(spread);
  json["per_seed"] = nlohmann::ordered_json::array();
  for (const SeededTable& t : tables) {
    nlohmann::ordered_json table = to_json(t.table);
    nlohmann::ordered_json seed{{"seed", t.seed}, {"tasks", table["tasks"]}};
    if (table.contains("by_source")) seed["by_source"] = table["by_source"];
    json["per_seed"].push_back(std::move(seed));
  }
  return json;
}

}  // namespace perftune
