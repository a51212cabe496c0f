#include "experiments/model_study/model_study.h"

#include <filesystem>
#include <iomanip>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

#include "experiments/model_study/model_study_plots.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "surrogate/study/prediction_csv.h"
#include "surrogate/study/study_runner.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

// The metrics in the order the tables print them, with whether each is a fraction shown in %.
struct Metric {
  const char* key;
  const char* label;
  bool percent;
};
constexpr Metric kMetrics[] = {{"kendall_tau", "tau", false},
                               {"top1_slowdown", "top-1", true},
                               {"top5_slowdown", "top-5", true},
                               {"top10_slowdown", "top-10", true},
                               {"mape", "MAPE", true}};

// True when `error` is StudyConfig::load's "this source file exists nowhere": its place is a
// source entry that is a string (so the entry was well-formed and only the file is missing).
bool is_missing_source(const InputError& error, const std::string& eval_file) {
  const std::string prefix = "$.sources[";
  if (error.file() != eval_file || !error.place().starts_with(prefix) || error.place().back() != ']') return false;
  const std::string digits = error.place().substr(prefix.size(), error.place().size() - prefix.size() - 1);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const nlohmann::json json = parse_json_file(eval_file);
  const std::size_t index = std::stoul(digits);
  return json.contains("sources") && json["sources"].is_array() && index < json["sources"].size() &&
         json["sources"][index].is_string();
}

nlohmann::ordered_json run_one(const ModelStudyEntry& entry, const StudyConfig& config, const fs::path& output,
                               const ModelStudyOptions& options) {
  std::ostream* progress = options.progress;
  const LoadedSources sources = load_sources(config);
  const std::string predictions = "predictions/" + entry.name + ".csv";
  PredictionWriter writer(output / predictions, options.tiling);
  const StudyResult result = run_evaluation(config, sources, progress, options.tiling,
                                            [&](const std::string& name, CostModel& model, const MeasuredKernel& kernel) {
                                              writer.add(name, model, kernel);
                                            });
  writer.finish();
  nlohmann::ordered_json json{{"name", entry.name}, {"config", entry.config}, {"seconds", result.seconds}};
  const nlohmann::ordered_json table = to_json(result.table);
  for (const auto& [key, value] : table.items()) json[key] = value;
  json["folds"] = nlohmann::ordered_json::array();
  for (const FoldReport& fold : result.folds)
    json["folds"].push_back({{"fold", fold.fold}, {"train_kernels", fold.train_kernels}, {"test_kernels", fold.test_kernels},
                             {"from_checkpoint", fold.from_checkpoint}, {"training", fold.training.to_json()}});
  json["predictions"] = predictions;
  json["predicted_points"] = writer.points();
  json["absolute_time"] = writer.absolute_time();
  return json;
}

std::string cell(const nlohmann::ordered_json& value, bool percent) {
  if (!value.is_number()) return "n/a";
  std::ostringstream out;
  out << std::fixed << std::setprecision(percent ? 2 : 3) << (percent ? 100.0 * value.get<double>() : value.get<double>())
      << (percent ? "%" : "");
  return out.str();
}

std::string metrics_header(const std::string& first) {
  std::string header = "| " + first + " |", rule = "| --- |";
  for (const Metric& metric : kMetrics) {
    header += std::string(" ") + metric.label + " |";
    rule += " ---: |";
  }
  return header + "\n" + rule + "\n";
}

std::string metrics_row(const std::string& first, const nlohmann::ordered_json& scores) {
  std::string row = "| " + first + " |";
  for (const Metric& metric : kMetrics) row += " " + cell(scores.value(metric.key, nlohmann::ordered_json()), metric.percent) + " |";
  return row + "\n";
}

}  // namespace

bool is_model_study(const nlohmann::json& json) { return json.is_object() && json.contains("studies"); }

ModelStudy parse_model_study(const nlohmann::json& json, const std::string& file) {
  const JsonView root(json, file);
  root.expect_keys({"name", "description", "studies", "output"});
  ModelStudy study;
  study.file = file;
  study.name = root.has("name") ? root.at("name").as_string() : fs::path(file).stem().string();
  study.description = root.get_string("description", "");
  const std::string base_dir = fs::path(file).parent_path().string();
  const auto resolve = [&](const std::string& path) {
    return fs::path(path).is_absolute() || base_dir.empty() ? path : (fs::path(base_dir) / path).lexically_normal().string();
  };
  const JsonView studies = root.at("studies");
  if (studies.size() == 0) studies.fail("at least one eval config (configs/eval/*.json)");
  std::set<std::string> names;
  for (const JsonView& view : studies.elements()) {
    ModelStudyEntry entry{"", resolve(view.as_string())};
    if (!fs::is_regular_file(entry.config)) view.fail("an existing eval config (" + entry.config + " is not a file)");
    entry.name = fs::path(entry.config).stem().string();
    if (!names.insert(entry.name).second) view.fail("an eval config whose name is not used before (\"" + entry.name + "\" is)");
    study.studies.push_back(std::move(entry));
  }
  study.output = resolve(root.get_string("output", "../../runs/" + study.name));
  return study;
}

nlohmann::ordered_json run_model_study(const ModelStudy& study, const ModelStudyOptions& options) {
  const fs::path output = options.output.empty() ? study.output : options.output;
  fs::create_directories(output / "studies");
  fs::create_directories(output / "predictions");
  nlohmann::ordered_json summary{{"kind", "model_study"},
                                 {"experiment", study.name},
                                 {"description", study.description},
                                 {"file", study.file},
                                 {"studies", nlohmann::ordered_json::array()},
                                 {"skipped", nlohmann::ordered_json::array()}};
  for (const ModelStudyEntry& entry : study.studies) {
    const std::string config_text = read_file(entry.config);
    const fs::path study_file = output / "studies" / (entry.name + ".json");
    nlohmann::ordered_json result;
    if (fs::exists(study_file)) {
      try {
        nlohmann::ordered_json saved = nlohmann::ordered_json::parse(read_file(study_file.string()));
        if (saved.value("config_text", "") == config_text) result = std::move(saved);
      } catch (const std::exception&) {
        // A file cut short by a kill: the study runs again.
      }
    }
    if (!result.is_null()) {
      if (options.progress) *options.progress << "[model_study] " << entry.name << ": reused " << study_file.string() << "\n";
    } else {
      std::optional<StudyConfig> config;
      try {
        config = StudyConfig::load(entry.config);
      } catch (const InputError& error) {
        if (!is_missing_source(error, entry.config)) throw;
        if (options.progress) *options.progress << "[model_study] " << entry.name << ": SKIPPED, " << error.what() << "\n";
        summary["skipped"].push_back({{"name", entry.name}, {"config", entry.config}, {"reason", error.what()}});
        continue;
      }
      if (options.progress) *options.progress << "[model_study] " << entry.name << ": " << entry.config << std::endl;
      result = run_one(entry, *config, output, options);
      result["config_text"] = config_text;
      write_file_atomically(study_file.string(), result.dump(1) + "\n");
    }
    result.erase("config_text");
    summary["studies"].push_back(std::move(result));
  }
  write_file_atomically((output / "summary.json").string(), summary.dump(1) + "\n");
  write_file_atomically((output / "tables.md").string(), model_study_tables(summary));
  if (options.plots) render_model_study_plots(output.string());
  return summary;
}

std::string model_study_tables(const nlohmann::ordered_json& summary) {
  std::string out;
  for (const auto& study : summary.at("studies")) {
    out += "### " + study.at("name").get<std::string>() + "\n\n";
    for (const auto& [task, models] : study.at("tasks").items()) {
      std::size_t rows = 0;
      for (const auto& row : study.at("kernels")) rows += row.at("task") == task ? 1 : 0;
      out += task + " task, mean over " + std::to_string(rows) +
             (task == "tile" ? " held-out kernels" : " held-out programs (runtime = sum of predicted kernel runtimes)") +
             ":\n\n" + metrics_header("model");
      for (const auto& [name, scores] : models.items()) out += metrics_row(name, scores);
      out += "\n";
    }
    out += "Per held-out kernel:\n\n" + metrics_header("kernel (device, configs): model");
    for (const auto& row : study.at("kernels")) {
      const std::string label = row.at("kernel").get<std::string>() + (row.at("task") == "fusion" ? " [fusion]" : "") + " (" +
                                row.at("device").get<std::string>() + ", " + std::to_string(row.at("configs").get<std::size_t>()) + ")";
      for (const auto& [name, scores] : row.at("models").items()) out += metrics_row(label + ": " + name, scores);
    }
    out += "\n";
  }
  for (const auto& skipped : summary.at("skipped"))
    out += "Skipped " + skipped.at("name").get<std::string>() + ": " + skipped.at("reason").get<std::string>() + "\n\n";
  return out;
}

}  // namespace perftune
