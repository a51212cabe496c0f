#pragma once
// Renders a gnuplot script by running Debian's gnuplot as a subprocess (gnuplot-nox: pngcairo and
// svg terminals). The script and its data files stay beside the images, so a figure can be edited
// and re-rendered by hand.
#include <cstddef>
#include <string>
#include <vector>

namespace perftune {

// The i-th colour of Tableau's ten (matplotlib's default cycle: distinguishable, colour-blind
// aware), as "#rrggbb"; cycles after ten.
const char* plot_color(std::size_t i);

// `name` with every character other than [A-Za-z0-9.-] replaced by '_': a file name for a figure.
std::string plot_file_stem(const std::string& name);

// Writes `dir`/`stem`.gp (`body` drawn once as PNG, once as SVG, both 960x600) and renders it;
// returns the two image paths. Throws like run_gnuplot.
std::vector<std::string> render_png_and_svg(const std::string& dir, const std::string& stem, const std::string& body);

// Writes a text file (a figure's data); throws std::runtime_error when it cannot.
void write_plot_file(const std::string& path, const std::string& text);

// Runs `gnuplot SCRIPT` in the script's folder. Throws std::runtime_error with gnuplot's own
// message when it is missing or exits non-zero.
void run_gnuplot(const std::string& script_path);

// `text` quoted for a gnuplot string literal (double quotes; backslash and quote escaped, a newline
// written as gnuplot's \n escape so that a title can take two lines).
std::string gnuplot_quote(const std::string& text);

}  // namespace perftune
