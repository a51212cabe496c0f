// perftune settings [SECTION]: every key a campaign's loop, strategy, backend and model residual
// take, with its default, range and meaning, printed from the settings tables (docs/settings.md is
// the same text).
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "autotuner/factories/settings_reference.h"
#include "cli/command.h"

namespace perftune::cli {
namespace {

// The "## " or "### " sections whose heading contains `word`, each with its subsections.
std::string sections_about(const std::string& reference, const std::string& word) {
  std::istringstream lines(reference);
  std::string line, out;
  std::size_t kept_level = 0;  // the heading level being kept; 0: none
  while (std::getline(lines, line)) {
    const std::size_t level = line.rfind("#", 0) == 0 ? line.find(' ') : 0;
    if (level >= 2) {
      if (kept_level && level <= kept_level) kept_level = 0;
      if (!kept_level && line.find(word) != std::string::npos) kept_level = level;
    }
    if (kept_level) out += line + "\n";
  }
  return out;
}

const bool registered = register_command({"settings", "Print every setting's key, default, range and meaning (docs/settings.md)",
  [](CLI::App& app) {
    auto section = std::make_shared<std::string>();
    app.add_option("section", *section, "Only the sections whose heading names this, e.g. evolution, cpu, residual");
    app.callback([section] {
      const std::string reference = settings_reference_markdown();
      if (section->empty()) {
        std::cout << reference;
        return;
      }
      const std::string found = sections_about(reference, *section);
      if (found.empty()) throw std::invalid_argument("no section of the settings names \"" + *section + "\" (see perftune settings)");
      std::cout << found;
    });
  }});

}  // namespace
}  // namespace perftune::cli
