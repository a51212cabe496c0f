#pragma once
// The predictions behind a study's metrics, one CSV row per scored model, held-out kernel and
// successful config (`perftune eval --predictions`, the model study's predictions/*.csv):
//   model,task,kernel,device,measured_seconds,predicted_seconds,config
// `config` is the config as JSON (quoted); a fusion row's prediction is the program's, the sum of
// its kernels' as the fusion metrics take it. Files written before the config column have six fields.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "surrogate/fusion/fusion_evaluation.h"

namespace perftune {

class PredictionWriter {
 public:
  // Writes to PATH.tmp until finish() renames it to PATH, so an interrupted study leaves no
  // truncated file under the final name. Throws std::runtime_error naming the file it cannot open.
  PredictionWriter(const std::filesystem::path& path, KernelTiling tiling);
  // The study runner's observer (ScoredModelObserver): the rows of one scored kernel.
  void add(const std::string& model_name, CostModel& model, const MeasuredKernel& kernel);
  void finish();

  const std::map<std::string, std::size_t>& points() const { return points_; }  // rows per model
  const std::map<std::string, bool>& absolute_time() const { return absolute_time_; }

 private:
  std::filesystem::path path_;
  KernelTiling tiling_;
  std::ofstream out_;
  std::map<std::string, std::size_t> points_;
  std::map<std::string, bool> absolute_time_;
};

// One line of such a file split on commas outside double quotes ("" is a quote).
std::vector<std::string> split_csv_line(const std::string& line);

}  // namespace perftune
