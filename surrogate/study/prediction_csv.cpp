#include "surrogate/study/prediction_csv.h"

#include <iomanip>
#include <stdexcept>
#include <utility>

#include "surrogate/evaluation/model_evaluation.h"

namespace perftune {

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

PredictionWriter::PredictionWriter(const std::filesystem::path& path, KernelTiling tiling)
    : path_(path), tiling_(std::move(tiling)), out_(path.string() + ".tmp", std::ios::trunc) {
  if (!out_) throw std::runtime_error(path.string() + ": cannot open " + path.string() + ".tmp for writing");
  out_ << "model,task,kernel,device,measured_seconds,predicted_seconds,config\n" << std::setprecision(9);
}

void PredictionWriter::add(const std::string& model_name, CostModel& model, const MeasuredKernel& kernel) {
  const auto [configs, measured] = ok_configs(kernel);
  const bool fusion = is_fusion_space(kernel);
  const std::vector<double> predicted =
      fusion ? predict_program_seconds(model, kernel, configs, tiling_) : predict_seconds(model, kernel, configs);
  const std::string prefix = csv_field(model_name) + "," + (fusion ? "fusion" : "tile") + "," +
                             csv_field(kernel.kernel.name()) + "," + csv_field(kernel.device) + ",";
  for (std::size_t i = 0; i < configs.size(); ++i)
    out_ << prefix << measured[i] << "," << predicted[i] << "," << csv_field(kernel.space->to_json(configs[i]).dump()) << "\n";
  points_[model_name] += configs.size();
  absolute_time_[model_name] = model.predicts_absolute_time();
}

void PredictionWriter::finish() {
  out_.close();
  if (!out_) throw std::runtime_error(path_.string() + ": cannot write " + path_.string() + ".tmp");
  std::filesystem::rename(path_.string() + ".tmp", path_);
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

}  // namespace perftune
