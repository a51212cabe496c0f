#pragma once
// One study trained with several seeds (perftune eval --seeds N): a trained model's scores move
// with its training seed as much as most changes to it do, so a comparison of two models is
// read against that spread. Each seed's table scores the same held-out rows; here they become
// one table of per-row means (what format_table and to_json print) and, per task and model, the
// sample standard deviation over seeds of the task averages.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "surrogate/evaluation/model_evaluation.h"

namespace perftune {

struct SeededTable {
  std::uint64_t seed = 0;
  EvaluationTable table;
};

// Each row's scores averaged over the seeds that gave a finite value (NaN where none did).
// Throws std::invalid_argument when `tables` is empty or the tables do not hold the same rows
// (task, kernel, device) in the same order, or the same model columns.
EvaluationTable mean_over_seeds(const std::vector<SeededTable>& tables);

// task -> model -> the sample standard deviation over seeds of each score's task average (NaN
// with fewer than two finite values). Same preconditions as mean_over_seeds.
std::map<std::string, std::map<std::string, ModelScores>> spread_over_seeds(const std::vector<SeededTable>& tables);

// "over N training seeds (s1, s2, ...): standard deviation of the task averages" and a table per
// task in format_table's columns.
std::string format_seed_spread(const std::vector<SeededTable>& tables);

// {"seeds": [...], "spread": {TASK: {MODEL: {scores}}}, "per_seed": [{"seed", "tasks", "by_source"
// (with several test sources)}]}, to be
// merged into to_json(mean_over_seeds(tables)).
nlohmann::ordered_json seed_spread_json(const std::vector<SeededTable>& tables);

}  // namespace perftune
