#include "ir/data_path.h"

#include <cstdlib>
#include <filesystem>

#include "ir/file_io.h"

namespace perftune {

std::string data_dir() {
  if (const char* env = std::getenv("PERFTUNE_DATA"); env && *env) return env;
#ifdef PERFTUNE_DEFAULT_DATA
  return PERFTUNE_DEFAULT_DATA;
#else
  return "../shared/data";
#endif
}

std::optional<std::string> find_data(const std::string& relative) {
  const auto path = std::filesystem::path(data_dir()) / relative;
  if (path_exists(path.string())) return path.lexically_normal().string();
  return std::nullopt;
}

}  // namespace perftune
