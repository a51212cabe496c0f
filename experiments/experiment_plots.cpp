#include "experiments/experiment_plots.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>
#include <utility>

#include "experiments/gnuplot.h"
#include "ir/count_limits.h"
#include "ir/file_io.h"
#include "ir/json_view.h"

namespace perftune {

namespace {

namespace fs = std::filesystem;

// The nth value of a numeric array, NaN for null (gnuplot skips it).
double at_or_nan(const JsonView& array, std::size_t i) {
  const JsonView value = array.at(i);
  return value.value().is_null() ? NAN : value.as_number();
}

// The strategies in the experiment's order (summary.json keeps it; a plain json object would sort
// them by name), so colours and legends follow the experiment file.
std::vector<std::string> strategy_names(const std::string& summary_path) {
  const nlohmann::ordered_json summary = nlohmann::ordered_json::parse(read_file(summary_path));
  std::vector<std::string> names;
  for (const auto& item : summary.at("strategies").items()) names.push_back(item.key());
  return names;
}

// The legend below the plot in two columns; the bottom margin grows with it, so it never covers
// the x label (gnuplot's automatic margin does not count a boxed key's rows).
std::string key_below(std::size_t entries) {
  return "set key below box\nset bmargin " + std::to_string(4 + (entries + 1) / 2) + "\n";
}

// A line with markers: the point type and marker spacing differ per strategy, so lines that lie
// on top of each other (strategies that find the same configs) still show every strategy.
std::string line_style(std::size_t t) {
  return "with linespoints lw 2 pt " + std::to_string(t % 13 + 1) + " ps 1.2 pi " + std::to_string(-(5 + static_cast<int>(t))) +
         " lc rgb \"" + plot_color(t) + "\"";
}

// The summary checked before any of it is drawn: plot reads files a user may have edited or cut
// short, and a value out of range would draw a wrong figure, or fail in gnuplot naming no place.
// Every curve holds one value per budget step, 1 .. max_budget.
void check_summary(const JsonView& summary) {
  if (!summary.is_object()) summary.fail("an object (an experiment's summary.json)");
  bounded_count(summary.at("seeds"), 1, kMaxSeeds, "seeds");
  const std::uint64_t max_budget = bounded_count(summary.at("max_budget"), 1, kMaxMeasurementBudget, "measurements");
  if (const std::optional<JsonView> budgets = summary.find("report_budgets")) {
    if (budgets->size() > max_budget)
      budgets->fail("at most max_budget (" + std::to_string(max_budget) + ") budgets, found " + std::to_string(budgets->size()));
    for (const JsonView& budget : budgets->elements()) bounded_count(budget, 1, max_budget, "measurements");
  }
  const JsonView strategies = summary.at("strategies");
  if (!strategies.is_object() || strategies.value().empty()) strategies.fail("an object with at least one strategy");
  const JsonView spaces = summary.at("spaces");
  if (spaces.size() == 0) spaces.fail("at least one space");
  const auto seconds = [](const JsonView& value, bool null_allowed) {
    if (null_allowed && value.value().is_null()) return;
    if (!(value.as_number() > 0)) value.fail("a positive number of seconds, found " + value.value().dump());
  };
  const auto check_curve = [&](const JsonView& curve) {
    if (curve.size() != max_budget)
      curve.fail("one value per budget step, " + std::to_string(max_budget) + " (max_budget), found " + std::to_string(curve.size()));
  };
  for (const JsonView& space : spaces.elements()) {
    seconds(space.at("reference_seconds"), false);
    seconds(space.at("optimum_seconds"), true);
    const JsonView random = space.at("random_expected_best");
    check_curve(random);
    for (const JsonView& value : random.elements()) seconds(value, true);
    for (const auto& item : strategies.value().items()) {
      const JsonView curves = space.at("strategies").at(item.key());
      for (const char* key : {"speedup_median", "speedup_q25", "speedup_q75", "score"}) check_curve(curves.at(key));
    }
  }
}

// What every figure of the experiment draws on, where it goes, and the image paths written so far.
struct FigureSet {
  fs::path plots;
  std::vector<std::string> strategies;  // in the experiment's order
  std::string experiment;               // the name every title starts with
  std::size_t seeds = 0;
  std::vector<std::string> written;     // image paths, in the order rendered

  void render(const std::string& stem, const std::string& body) {
    for (std::string& path : render_png_and_svg(plots.string(), stem, body)) written.push_back(std::move(path));
  }
};

// P(b) summed over the spaces that have it, for the mean over spaces.
struct BudgetScores {
  std::vector<std::vector<double>> sum;  // [strategy][b-1]
  std::vector<std::vector<std::size_t>> count;
  std::size_t max_budget = 0;
};

// One space's speedup table (per budget: each strategy's median, q25, q75, then random search);
// adds the space's P(b) to `scores` on the way.
std::string speedup_table(const JsonView& space, const std::vector<std::string>& strategies, double reference, const JsonView& random,
                          BudgetScores& scores) {
  const std::size_t budget = random.size();
  std::ostringstream data;
  data << std::setprecision(7) << "# budget";
  for (const std::string& s : strategies) data << "  [" << s << ": median q25 q75]";
  data << "  random_expected\n";
  for (std::size_t b = 1; b <= budget; ++b) {
    data << b;
    for (std::size_t t = 0; t < strategies.size(); ++t) {
      const JsonView curve = space.at("strategies").at(strategies[t]);
      data << " " << at_or_nan(curve.at("speedup_median"), b - 1) << " " << at_or_nan(curve.at("speedup_q25"), b - 1) << " "
           << at_or_nan(curve.at("speedup_q75"), b - 1);
      const double p = at_or_nan(curve.at("score"), b - 1);
      scores.sum[t].resize(std::max(scores.sum[t].size(), budget), 0.0);
      scores.count[t].resize(std::max(scores.count[t].size(), budget), 0);
      if (std::isfinite(p)) {
        scores.sum[t][b - 1] += p;
        ++scores.count[t][b - 1];
      }
    }
    data << " " << reference / at_or_nan(random, b - 1) << "\n";
  }
  return data.str();
}

// Peers (a live space's autoschedulers): horizontal lines at their speedup over the reference.
std::vector<std::pair<std::string, double>> peer_speedups(const JsonView& space, double reference) {
  std::vector<std::pair<std::string, double>> peer_lines;
  if (const auto peers = space.find("peers"))
    for (const auto& [peer, entry] : peers->value().items())
      if (entry.contains("seconds") && entry["seconds"].is_number() && entry["seconds"].get<double>() > 0)
        peer_lines.emplace_back(peer, reference / entry["seconds"].get<double>());
  return peer_lines;
}

// The plot command's series: each strategy's band and median, random search, the peers.
std::vector<std::string> speedup_series(const std::string& stem, const std::vector<std::string>& strategies, const std::string& random_kind,
                                        const std::vector<std::pair<std::string, double>>& peer_lines) {
  const std::string dat = gnuplot_quote(stem + ".dat");
  std::vector<std::string> series;
  for (std::size_t t = 0; t < strategies.size(); ++t) {
    const std::size_t column = 2 + 3 * t;
    std::ostringstream line;
    line << "  " << dat << " using 1:" << column + 1 << ":" << column + 2 << " with filledcurves lc rgb \"" << plot_color(t)
         << "\" notitle, \\\n  " << dat << " using 1:" << column << " " << line_style(t) << " title " << gnuplot_quote(strategies[t]);
    series.push_back(line.str());
  }
  if (random_kind != "none")
    series.push_back("  " + dat + " using 1:" + std::to_string(2 + 3 * strategies.size()) + " with lines dt 2 lw 2 lc rgb \"black\" title " +
                     (random_kind == "exact" ? "\"random search (exact expectation)\"" : "\"random search (measured mean over seeds)\""));
  for (std::size_t p = 0; p < peer_lines.size(); ++p) {
    std::ostringstream line;
    line << std::setprecision(7) << "  " << peer_lines[p].second << " with lines dt 3 lw 2 lc rgb \"" << plot_color(strategies.size() + p)
         << "\" title " << gnuplot_quote(peer_lines[p].first);
    series.push_back(line.str());
  }
  return series;
}

// Speedup vs budget for one space.
void render_speedup(FigureSet& figures, const JsonView& space, BudgetScores& scores) {
  const std::vector<std::string>& strategies = figures.strategies;
  const std::string name = space.at("name").as_string();
  const std::string stem = "speedup_" + plot_file_stem(name);
  const double reference = space.at("reference_seconds").as_number();
  const bool is_default = space.at("reference").as_string() == "default";
  const JsonView random = space.at("random_expected_best");
  const std::size_t budget = random.size();
  scores.max_budget = std::max(scores.max_budget, budget);
  scores.sum.resize(strategies.size());
  scores.count.resize(strategies.size());
  write_plot_file((figures.plots / (stem + ".dat")).string(), speedup_table(space, strategies, reference, random, scores));
  const std::vector<std::pair<std::string, double>> peer_lines = peer_speedups(space, reference);
  std::ostringstream body;
  // A CPU's device names its compiler version too; the title keeps the part before it.
  const std::string device = space.get_string("device", "");
  body << "set title " << gnuplot_quote(figures.experiment + ": " + name + " (" + device.substr(0, device.find(" (")) + "), median of " +
                                        std::to_string(figures.seeds) + " seeds, band 25-75%")
       << "\nset xlabel \"budget (measurements, log scale)\"\n"
       << "set ylabel " << gnuplot_quote(is_default ? "speedup over the default config (x)"
                                                    : "speedup over the median config (x; no default in this space)")
       << "\nset logscale x\nset xrange [1:" << budget << "]\nset grid\n" << key_below(strategies.size() + 1 + peer_lines.size())
       << "set style fill transparent solid 0.15 noborder\nplot \\\n";
  const std::string random_kind = space.get_string("random_baseline", "exact");  // live spaces: measured or none
  const std::vector<std::string> series = speedup_series(stem, strategies, random_kind, peer_lines);
  for (std::size_t i = 0; i < series.size(); ++i) body << series[i] << (i + 1 < series.size() ? ", \\\n" : "\n");
  figures.render(stem, body.str());
}

// One score per strategy.
void render_scores(FigureSet& figures, const JsonView& summary, std::size_t spaces) {
  const std::vector<std::string>& strategies = figures.strategies;
  std::ostringstream data;
  data << "# index \"strategy\" score standard_error\n";
  for (std::size_t t = 0; t < strategies.size(); ++t) {
    const JsonView row = summary.at("strategies").at(strategies[t]);
    const JsonView score = row.at("score");
    // Summaries written before the standard error existed have none: no bar then.
    const std::optional<JsonView> error = row.find("score_standard_error");
    data << t << " " << gnuplot_quote(strategies[t]) << " " << (score.value().is_null() ? NAN : score.as_number()) << " "
         << (!error || error->value().is_null() ? NAN : error->as_number()) << "\n";
  }
  write_plot_file((figures.plots / "score.dat").string(), data.str());
  std::ostringstream body;
  body << "set title " << gnuplot_quote(figures.experiment + ": score per strategy\n(P averaged over report budgets and " +
                                        std::to_string(spaces) + " spaces; bars: 95% interval over seeds)")
       << "\nset ylabel \"score P (0 = random search, 1 = optimum; unitless)\"\nset xlabel \"strategy\"\n"
       << "set yrange [*<-0.1:1.1]\nset grid ytics\nset style fill solid 0.7 border -1\nset boxwidth 0.6\n"
       << "set xtics rotate by -25\nset key off\nset xzeroaxis lt -1\n"
       << "plot \"score.dat\" using 1:3:($1+1):xtic(2) with boxes lc variable, "
       << "\"\" using 1:3:(1.96*$4) with yerrorbars lc black pt 0, "
       << "\"\" using 1:3:(sprintf(\"%.2f\", $3)) with labels offset 3,0.6\n";
  figures.render("score", body.str());
}

// P(b) averaged over spaces.
void render_score_vs_budget(FigureSet& figures, const BudgetScores& scores, std::size_t spaces) {
  const std::vector<std::string>& strategies = figures.strategies;
  std::ostringstream data;
  data << std::setprecision(6) << "# budget, then mean P(b) over spaces per strategy\n";
  for (std::size_t b = 1; b <= scores.max_budget; ++b) {
    data << b;
    for (std::size_t t = 0; t < strategies.size(); ++t)
      data << " " << (b - 1 < scores.count[t].size() && scores.count[t][b - 1] ? scores.sum[t][b - 1] / scores.count[t][b - 1] : NAN);
    data << "\n";
  }
  write_plot_file((figures.plots / "score_vs_budget.dat").string(), data.str());
  std::ostringstream body;
  body << "set title " << gnuplot_quote(figures.experiment + ": standardized score P(b), mean over " + std::to_string(spaces) +
                                        " spaces")
       << "\nset xlabel \"budget (measurements, log scale)\"\n"
       << "set ylabel \"P(b) (0 = random search, 1 = optimum; unitless)\"\nset logscale x\nset xrange [1:" << scores.max_budget
       << "]\nset grid\n" << key_below(strategies.size()) << "set xzeroaxis lt -1\nplot \\\n";
  for (std::size_t t = 0; t < strategies.size(); ++t)
    body << "  \"score_vs_budget.dat\" using 1:" << t + 2 << " " << line_style(t) << " title "
         << gnuplot_quote(strategies[t]) << (t + 1 < strategies.size() ? ", \\\n" : "\n");
  figures.render("score_vs_budget", body.str());
}

// P(t) summed over the spaces that have a curve for one time window, per strategy and point.
struct TimeScores {
  std::vector<std::vector<double>> sum, count;
};

TimeScores sum_time_scores(const std::vector<JsonView>& spaces, const std::vector<std::string>& strategies, const std::string& label) {
  std::vector<std::vector<double>> sum(strategies.size()), count(strategies.size());
  for (const JsonView& space : spaces)
    for (std::size_t t = 0; t < strategies.size(); ++t) {
      const std::optional<JsonView> curves = space.at("strategies").at(strategies[t]).find("time_score_curve");
      if (!curves || !curves->find(label)) continue;
      const JsonView curve = curves->at(label);
      sum[t].resize(std::max(sum[t].size(), curve.size()), 0.0);
      count[t].resize(sum[t].size(), 0.0);
      for (std::size_t i = 0; i < curve.size(); ++i)
        if (const double p = at_or_nan(curve, i); std::isfinite(p)) {
          sum[t][i] += p;
          count[t][i] += 1;
        }
    }
  return {std::move(sum), std::move(count)};
}

// P over tuning time for one time-axis window (time_axis_score.h), mean over spaces; nothing for a
// window of fewer than two points. Each space's window spans its own seconds, so the x axis is the
// position within the window.
void render_score_vs_time(FigureSet& figures, const JsonView& window, const std::vector<JsonView>& spaces) {
  const std::vector<std::string>& strategies = figures.strategies;
  const std::string label = window.at("window").as_string();
  const TimeScores scores = sum_time_scores(spaces, strategies, label);
  std::size_t points = 0;
  for (const auto& s : scores.sum) points = std::max(points, s.size());
  if (points < 2) return;
  const std::string stem = "score_vs_time_" + plot_file_stem(label);
  std::ostringstream data;
  data << std::setprecision(6) << "# position in the window (0: start, 1: end), then mean P(t) over spaces per strategy\n";
  for (std::size_t i = 0; i < points; ++i) {
    data << static_cast<double>(i) / static_cast<double>(points - 1);
    for (std::size_t t = 0; t < strategies.size(); ++t)
      data << " " << (i < scores.count[t].size() && scores.count[t][i] > 0 ? scores.sum[t][i] / scores.count[t][i] : NAN);
    data << "\n";
  }
  write_plot_file((figures.plots / (stem + ".dat")).string(), data.str());
  std::ostringstream body;
  body << "set title " << gnuplot_quote(figures.experiment + ": P over tuning time (hardware + strategy seconds), window " + label +
                                        ", mean over spaces")
       << "\nset xlabel \"position in each space's window (0: random search " << window.at("p_start").as_number()
       << " of the way from median to optimum, 1: " << window.at("p_end").as_number() << ")\"\n"
       << "set ylabel \"P(t) (0 = random search, 1 = optimum; unitless)\"\nset xrange [0:1]\nset grid\n"
       << key_below(strategies.size()) << "set xzeroaxis lt -1\nplot \\\n";
  for (std::size_t t = 0; t < strategies.size(); ++t)
    body << "  " << gnuplot_quote(stem + ".dat") << " using 1:" << t + 2 << " " << line_style(t) << " title "
         << gnuplot_quote(strategies[t]) << (t + 1 < strategies.size() ? ", \\\n" : "\n");
  figures.render(stem, body.str());
}

}  // namespace

std::vector<std::string> render_experiment_plots(const std::string& results_dir) {
  const std::string summary_path = (fs::path(results_dir) / "summary.json").string();
  const nlohmann::json document = parse_json_file(summary_path);
  const JsonView summary(document, summary_path);
  check_summary(summary);
  FigureSet figures;
  figures.plots = fs::path(results_dir) / "plots";
  fs::create_directories(figures.plots);
  figures.strategies = strategy_names(summary_path);
  figures.experiment = summary.get_string("experiment", "experiment");
  figures.seeds = static_cast<std::size_t>(summary.at("seeds").as_positive_int());

  const std::vector<JsonView> spaces = summary.at("spaces").elements();
  BudgetScores scores;
  for (const JsonView& space : spaces) render_speedup(figures, space, scores);
  render_scores(figures, summary, spaces.size());
  render_score_vs_budget(figures, scores, spaces.size());
  if (const std::optional<JsonView> windows = summary.find("time_windows"))
    for (const JsonView& window : windows->elements()) render_score_vs_time(figures, window, spaces);
  return std::move(figures.written);
}

}  // namespace perftune
