#pragma once
// docs/settings.md: every component's settings table as one Markdown reference (a test keeps the
// committed file equal to it).
#include <string>

namespace perftune {

std::string settings_reference_markdown();

}  // namespace perftune
