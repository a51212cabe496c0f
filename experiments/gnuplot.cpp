#include "experiments/gnuplot.h"

#include <sys/wait.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace perftune {

namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

// Big enough for a dozen legend entries; the same size for PNG and SVG.
constexpr const char* kSize = "size 960,600";

// Single-quoted for /bin/sh.
std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

const char* plot_color(std::size_t i) { return kColors[i % std::size(kColors)]; }

std::string plot_file_stem(const std::string& name) {
  std::string stem;
  for (char c : name) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return stem;
}

void write_plot_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::vector<std::string> render_png_and_svg(const std::string& dir, const std::string& stem, const std::string& body) {
  std::ostringstream script;
  script << "set terminal pngcairo " << kSize << " noenhanced font \"Sans,11\"\n"
         << "set output " << gnuplot_quote(stem + ".png") << "\n"
         << body << "set terminal svg " << kSize << " noenhanced font \"Sans,11\" background rgb \"white\"\n"
         << "set output " << gnuplot_quote(stem + ".svg") << "\nreplot\nunset output\n";
  const std::filesystem::path base(dir);
  const std::string script_path = (base / (stem + ".gp")).string();
  write_plot_file(script_path, script.str());
  run_gnuplot(script_path);
  return {(base / (stem + ".png")).string(), (base / (stem + ".svg")).string()};
}

std::string gnuplot_quote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

void run_gnuplot(const std::string& script_path) {
  const std::filesystem::path script = std::filesystem::absolute(script_path);
  const std::filesystem::path log = script.string() + ".log";
  const std::string command = "cd " + shell_quote(script.parent_path().string()) + " && gnuplot " +
                              shell_quote(script.filename().string()) + " > " + shell_quote(log.string()) + " 2>&1";
  const int status = std::system(command.c_str());
  if (status == 0) {
    std::filesystem::remove(log);
    return;
  }
  std::ostringstream message;
  message << "gnuplot failed on " << script.string();
  if (status == -1) message << ": could not start a shell";
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) message << ": gnuplot is not installed (Debian: gnuplot-nox)";
  else if (WIFEXITED(status)) message << " (exit status " << WEXITSTATUS(status) << ")";
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  if (!last.empty()) message << ": " << last;
  throw std::runtime_error(message.str());
}

}  // namespace perftune
