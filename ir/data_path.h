#pragma once
// The one setting that locates external data (../shared/data): the PERFTUNE_DATA environment
// variable, else the folder fixed at configure time (the project root's ../shared/data).
#include <optional>
#include <string>

namespace perftune {

std::string data_dir();
// `relative` under data_dir() if it exists, else nullopt (callers skip with a clear message).
std::optional<std::string> find_data(const std::string& relative);

}  // namespace perftune
