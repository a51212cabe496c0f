#include "experiments/gnuplot.h"

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace perftune {

namespace {

// Single-quoted for /bin/sh.
std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

std::string gnuplot_quote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
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
