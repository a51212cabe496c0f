// The include arrows the build cannot enforce: every layer's library has the whole source root on
// its include path, so a header included against the layering (CMakeLists.txt) or against the
// order of surrogate/'s folders (surrogate/README.md) still compiles. This reads every source's
// project includes and checks them against both.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace perftune {
namespace {

namespace fs = std::filesystem;

struct Include {
  std::string from;  // the including file, relative to the source root
  int line = 0;
  std::string to;    // the included path, as written
};

std::vector<Include> project_includes(const std::string& folder) {
  const fs::path root = PERFTUNE_SOURCE_DIR;
  const std::regex pattern(R"re(^#include "([a-z_]+/[^"]+)")re");
  std::vector<Include> found;
  for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
    const std::string extension = entry.path().extension().string();
    if (extension != ".h" && extension != ".cpp") continue;
    std::ifstream in(entry.path());
    std::string text;
    for (int line = 1; std::getline(in, text); ++line) {
      std::smatch match;
      if (std::regex_search(text, match, pattern))
        found.push_back({fs::relative(entry.path(), root).string(), line, match[1].str()});
    }
  }
  return found;
}

std::string folder_of(const std::string& path, std::size_t depth = 0) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < depth; ++i) start = path.find('/', start) + 1;
  const std::size_t end = path.find('/', start);
  return end == std::string::npos ? "" : path.substr(start, end - start);
}

std::string where(const Include& include) { return include.from + ":" + std::to_string(include.line) + " includes " + include.to; }

TEST_CASE("every layer includes only the layers below it, and distributed/ only through ranks.h", "[layering]") {
  // CMakeLists.txt and docs/architecture.md: ir <- frontend, hardware, surrogate, search;
  // hardware <- offline; all of them <- autotuner <- export, experiments <- cli.
  const std::map<std::string, std::set<std::string>> may_include = {
      {"ir", {}},
      {"frontend", {"ir"}},
      {"distributed", {}},
      {"hardware", {"ir", "distributed"}},
      {"offline", {"ir", "distributed", "hardware"}},
      {"surrogate", {"ir", "distributed"}},
      {"search", {"ir", "surrogate"}},
      {"autotuner", {"ir", "frontend", "distributed", "hardware", "offline", "surrogate", "search"}},
      {"export", {"ir", "frontend", "distributed", "hardware", "offline", "surrogate", "search", "autotuner"}},
      {"experiments", {"ir", "frontend", "distributed", "hardware", "offline", "surrogate", "search", "autotuner"}},
      {"cli", {"ir", "frontend", "distributed", "hardware", "offline", "surrogate", "search", "autotuner", "export", "experiments"}}};
  std::size_t checked = 0;
  std::vector<std::string> wrong;
  for (const auto& [layer, below] : may_include)
    for (const Include& include : project_includes(layer)) {
      const std::string target = folder_of(include.to);
      if (!may_include.count(target)) continue;  // not a layer: a generated header, say
      ++checked;
      if (target != layer && !below.count(target)) wrong.push_back(where(include) + " (" + layer + " may not see " + target + ")");
      if (target == "distributed" && layer != "distributed" && include.to != "distributed/ranks.h")
        wrong.push_back(where(include) + " (only distributed/ranks.h is distributed/'s interface)");
    }
  std::ostringstream list;
  for (const std::string& line : wrong) list << line << "\n";
  INFO(list.str());
  CHECK(checked > 500);  // the scan found the sources
  CHECK(wrong.empty());
}

TEST_CASE("hardware/'s backends see the shared folders, not each other, and no worker's sources", "[layering]") {
  // hardware/README.md: a folder per backend (replay, command, halide) and per peer (library), over
  // shared folders; a worker/ folder is a child executable's own sources, which the library side
  // reaches over a pipe, never by include. The Halide backend times the library peer beside its
  // own configs, hence halide -> library.
  const std::set<std::string> shared = {"", "process", "reference", "timing", "wrappers"};
  const std::map<std::string, std::set<std::string>> may_see = {{"replay", {}},  {"command", {}},  {"halide", {"library"}},
                                                                {"library", {}}, {"wrappers", {}}, {"process", {}},
                                                                {"reference", {}}, {"timing", {}}};
  std::size_t checked = 0;
  std::vector<std::string> wrong;
  for (const Include& include : project_includes("hardware")) {
    if (folder_of(include.to) != "hardware") continue;
    const std::string from = folder_of(include.from, 1), to = folder_of(include.to, 1);
    const bool from_worker = include.from.find("/worker/") != std::string::npos;
    const bool to_worker = include.to.find("/worker/") != std::string::npos;
    ++checked;
    if (to_worker && !(from_worker && from == to)) {
      wrong.push_back(where(include) + " (a worker's sources are its own)");
      continue;
    }
    if (from.empty() || from == to || shared.count(to)) continue;
    if (!may_see.count(from) || !may_see.at(from).count(to)) wrong.push_back(where(include) + " (" + from + "/ may not see " + to + "/)");
  }
  std::ostringstream list;
  for (const std::string& line : wrong) list << line << "\n";
  INFO(list.str());
  CHECK(checked > 50);  // the scan found the sources
  CHECK(wrong.empty());
}

TEST_CASE("surrogate/'s folders include one way: study, training, gnn and trees, features, analytical, fusion, evaluation", "[layering]") {
  // Rank in surrogate/README.md's table: a folder includes its own files and those ranked below it
  // (gnn/ and trees/, two models side by side, see neither each other).
  const std::map<std::string, int> rank = {{"study", 0},      {"training", 1}, {"gnn", 2},        {"trees", 2}, {"features", 3},
                                           {"analytical", 4}, {"fusion", 5},   {"evaluation", 6}, {"", 7}};
  std::size_t checked = 0;
  std::vector<std::string> wrong;
  for (const Include& include : project_includes("surrogate")) {
    if (folder_of(include.to) != "surrogate") continue;
    const std::string from = folder_of(include.from, 1), to = folder_of(include.to, 1);
    ++checked;
    if (include.from.rfind("surrogate/learned_model.", 0) == 0) continue;  // the facade over gnn/ and trees/, for other layers
    if (from == "transfer" || to == "transfer") {
      // Models corrected by the target's measurements: beside the others, on the interface only.
      if (from != to && !(from == "transfer" && to.empty())) wrong.push_back(where(include) + " (transfer/ sees the interface only)");
      continue;
    }
    if (!rank.count(from) || !rank.count(to)) {
      wrong.push_back(where(include) + " (a folder missing from surrogate/README.md's order)");
      continue;
    }
    if (from != to && rank.at(to) <= rank.at(from)) wrong.push_back(where(include) + " (" + from + "/ may not see " + to + "/)");
  }
  std::ostringstream list;
  for (const std::string& line : wrong) list << line << "\n";
  INFO(list.str());
  CHECK(checked > 50);  // the scan found the sources
  CHECK(wrong.empty());
}

}  // namespace
}  // namespace perftune
