#pragma once
// Renders a gnuplot script by running Debian's gnuplot as a subprocess (gnuplot-nox: pngcairo and
// svg terminals). The script and its data files stay beside the images, so a figure can be edited
// and re-rendered by hand.
#include <string>

namespace perftune {

// Runs `gnuplot SCRIPT` in the script's folder. Throws std::runtime_error with gnuplot's own
// message when it is missing or exits non-zero.
void run_gnuplot(const std::string& script_path);

// `text` quoted for a gnuplot string literal (double quotes; backslash and quote escaped).
std::string gnuplot_quote(const std::string& text);

}  // namespace perftune
