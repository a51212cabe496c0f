#include "experiments/model_study/model_study_plots.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "experiments/gnuplot.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "surrogate/study/prediction_csv.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

struct Point {
  double measured, predicted;
};

// Series keyed by "MODEL (TASK)", in first-seen order.
std::vector<std::pair<std::string, std::vector<Point>>> read_predictions(const std::string& path) {
  std::istringstream in(read_file(path));
  std::vector<std::pair<std::string, std::vector<Point>>> series;
  std::map<std::string, std::size_t> index;
  std::string line;
  std::getline(in, line);  // header
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const std::vector<std::string> fields = split_csv_line(line);
    Point point{};
    try {
      if (fields.size() != 6 && fields.size() != 7) throw std::invalid_argument("field count");  // 6: before the config column
      point = {std::stod(fields[4]), std::stod(fields[5])};
    } catch (const std::exception&) {
      throw InputError(path, "line " + std::to_string(number),
                       "model,task,kernel,device,measured_seconds,predicted_seconds[,config] with two numbers");
    }
    const std::string key = fields[0] + " (" + fields[1] + ")";
    auto [it, added] = index.try_emplace(key, series.size());
    if (added) series.push_back({key, {}});
    series[it->second].second.push_back(point);
  }
  return series;
}

std::string percent_or_na(const JsonView& scores, const char* key) {
  const auto value = scores.find(key);
  if (!value || !value->value().is_number()) return "n/a";
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << 100.0 * value->as_number() << "%";
  return out.str();
}

std::string tau_or_na(const JsonView& scores) {
  const auto value = scores.find("kendall_tau");
  if (!value || !value->value().is_number()) return "n/a";
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << value->as_number();
  return out.str();
}

std::vector<std::string> render_scatter(const JsonView& study, const std::string& experiment, const fs::path& dir,
                                        const fs::path& plots) {
  const std::string name = study.at("name").as_string();
  const auto series = read_predictions((dir / study.at("predictions").as_string()).string());
  if (series.empty()) return {};
  const std::string stem = "scatter_" + plot_file_stem(name);
  std::ostringstream data, lines;  // lines: one plot clause per series
  data << std::setprecision(7);
  double low = INFINITY, high = 0.0;  // of the measured runtimes: the axes cover them
  std::size_t total = 0, plotted = 0;
  for (const auto& entry : series)
    for (const Point& p : entry.second)
      if (p.measured > 0) {
        low = std::min(low, p.measured);
        high = std::max(high, p.measured);
      }
  // A decade beyond the measured range on both axes (a square, ratio -1): a prediction off by more
  // than that would squeeze every other point into a corner, so it is counted in the title instead.
  const double from = low / 10.0, to = high * 10.0;
  std::size_t outside = 0;
  for (std::size_t s = 0; s < series.size(); ++s) {
    const auto& [key, points] = series[s];
    const std::size_t stride = (points.size() + kMaxScatterPoints - 1) / kMaxScatterPoints;
    data << "# " << key << "\n";
    std::size_t shown = 0;
    for (std::size_t i = 0; i < points.size(); i += stride) {
      const Point& p = points[i];
      if (!(p.measured > 0 && p.predicted >= from && p.predicted <= to)) {
        ++outside;
        continue;
      }
      data << p.measured << " " << p.predicted << "\n";
      ++shown;
    }
    data << "\n\n";
    total += points.size();
    plotted += shown;
    // The model's averages over the task's rows, in the legend.
    const std::string model = key.substr(0, key.find(" ("));
    const std::string task = key.substr(key.find(" (") + 2, key.size() - key.find(" (") - 3);
    std::string label = key + ": " + std::to_string(points.size()) + " configs";
    if (stride > 1) label += " (every " + std::to_string(stride) + "th shown)";
    if (const auto tasks = study.find("tasks"); tasks && tasks->has(task) && tasks->at(task).has(model)) {
      const JsonView scores = tasks->at(task).at(model);
      label += ", mean tau " + tau_or_na(scores) + ", MAPE " + percent_or_na(scores, "mape");
    }
    lines << "  " << gnuplot_quote(stem + ".dat") << " index " << s << " using 1:2 with points pt 7 ps 0.5 lc rgb \""
         << plot_color(s) << "\" title " << gnuplot_quote(label) << ", \\\n";
  }
  if (plotted == 0) return {};
  write_plot_file((plots / (stem + ".dat")).string(), data.str());
  std::ostringstream body;
  body << "set title " << gnuplot_quote(experiment + ": " + name + ", predicted vs measured runtime of " + std::to_string(total) +
                                        " held-out configs" +
                                        (outside ? " (" + std::to_string(outside) + (outside == 1 ? " prediction" : " predictions") + " off the axes)"
                                                 : ""))
       << "\nset xlabel \"measured runtime (s, log scale)\"\nset ylabel \"predicted runtime (s, log scale)\"\n"
       << "set logscale xy\nset format x \"%.0e\"\nset format y \"%.0e\"\nset grid\nset size ratio -1\n"
       << "set xrange [" << from << ":" << to << "]\nset yrange [" << from << ":" << to << "]\n"
       // The legend below in one column (its entries are long); the margin grows with it.
       << "set key below box maxcols 1\nset bmargin " << 4 + series.size() + 1 << "\nplot \\\n"
       << lines.str() << "  x with lines dt 2 lw 1.5 lc rgb \"black\" title \"predicted = measured\"\n";
  return render_png_and_svg(plots.string(), stem, body.str());
}

std::vector<std::string> render_tau_bars(const JsonView& study, const std::string& experiment, const fs::path& plots) {
  const std::string name = study.at("name").as_string();
  const std::vector<JsonView> rows = study.at("kernels").elements();
  std::vector<std::string> models;  // those with a finite tau somewhere, random excluded
  for (const auto& item : study.at("models").value().items()) {
    const std::string& model = item.key();
    if (model == "random") continue;
    const bool ranks = std::any_of(rows.begin(), rows.end(), [&](const JsonView& row) {
      return row.at("models").has(model) && row.at("models").at(model).at("kendall_tau").value().is_number();
    });
    if (ranks) models.push_back(model);
  }
  if (models.empty() || rows.empty()) return {};
  const std::string stem = "tau_" + plot_file_stem(name);
  // The device in each label only when the kernels come from several (it can be long: a CPU's
  // fingerprint names its compiler); else once, in the axis label.
  const bool one_device = std::all_of(rows.begin(), rows.end(), [&](const JsonView& row) {
    return row.at("device").as_string() == rows.front().at("device").as_string();
  });
  std::ostringstream data;
  data << std::setprecision(5) << "# kernel";
  for (const std::string& model : models) data << " " << gnuplot_quote(model);
  data << "\n";
  for (const JsonView& row : rows) {
    std::string label = row.at("kernel").as_string() + (row.at("task").as_string() == "fusion" ? " [fusion]" : "");
    if (!one_device) label += " (" + row.at("device").as_string() + ")";
    data << gnuplot_quote(label);
    for (const std::string& model : models) {
      const bool has = row.at("models").has(model) && row.at("models").at(model).at("kendall_tau").value().is_number();
      data << " " << (has ? row.at("models").at(model).at("kendall_tau").as_number() : NAN);
    }
    data << "\n";
  }
  write_plot_file((plots / (stem + ".dat")).string(), data.str());
  std::ostringstream body;
  body << "set title " << gnuplot_quote(experiment + ": " + name + ", Kendall's tau per held-out kernel (" +
                                        std::to_string(rows.size()) + (rows.size() == 1 ? " kernel" : " kernels") + "; random search = 0)")
       << "\nset ylabel \"Kendall's tau within the kernel (unitless; 1 = measured order)\"\n"
       << "set xlabel " << gnuplot_quote(one_device ? "held-out kernel, all on " + rows.front().at("device").as_string()
                                                    : "held-out kernel (device)")
       << "\nset yrange [-1:1.05]\nset grid ytics\nset xzeroaxis lt -1\n"
       << "set datafile missing \"NaN\"\nset style data histograms\nset style histogram cluster gap 1\n"
       << "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset xtics rotate by -35 font \",9\"\n"
       << "set key right bottom box opaque\nplot \\\n";
  for (std::size_t m = 0; m < models.size(); ++m)
    body << "  " << gnuplot_quote(stem + ".dat") << " using " << m + 2 << (m == 0 ? ":xtic(1)" : "") << " lc rgb \""
         << plot_color(m) << "\" title " << gnuplot_quote(models[m]) << (m + 1 < models.size() ? ", \\\n" : "\n");
  return render_png_and_svg(plots.string(), stem, body.str());
}

}  // namespace

bool is_model_study_results(const std::string& results_dir) {
  const fs::path path = fs::path(results_dir) / "summary.json";
  if (!fs::exists(path)) return false;
  const nlohmann::json summary = parse_json_file(path.string());
  return summary.is_object() && summary.value("kind", "") == "model_study";
}

std::vector<std::string> render_model_study_plots(const std::string& results_dir) {
  const fs::path dir(results_dir);
  const std::string summary_path = (dir / "summary.json").string();
  const nlohmann::json document = parse_json_file(summary_path);
  const JsonView summary(document, summary_path);
  const std::string experiment = summary.get_string("experiment", "model_study");
  const fs::path plots = dir / "plots";
  fs::create_directories(plots);
  std::vector<std::string> written;
  for (const JsonView& study : summary.at("studies").elements()) {
    for (std::string& path : render_scatter(study, experiment, dir, plots)) written.push_back(std::move(path));
    for (std::string& path : render_tau_bars(study, experiment, plots)) written.push_back(std::move(path));
  }
  return written;
}

}  // namespace perftune
