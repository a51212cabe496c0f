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

std::string shipped_model_path() {
  if (const char* env = std::getenv("PERFTUNE_MODEL"); env && *env) return env;
#ifdef PERFTUNE_SHIPPED_MODEL
  return PERFTUNE_SHIPPED_MODEL;
#else
  return "models/halide_cpu.json";
#endif
}

std::optional<std::string> find_data(const std::string& relative) {
  const auto path = std::filesystem::path(data_dir()) / relative;
  if (path_exists(path.string())) return path.lexically_normal().string();
  return std::nullopt;
}

std::string resolve_config_path(const std::string& value, const std::string& base_dir) {
  constexpr std::string_view kDataPrefix = "${PERFTUNE_DATA}";
  if (value.starts_with(kDataPrefix)) {
    std::string rest = value.substr(kDataPrefix.size());
    while (!rest.empty() && rest.front() == '/') rest.erase(0, 1);
    return (std::filesystem::path(data_dir()) / rest).string();
  }
  const std::filesystem::path path(value);
  if (path.is_absolute()) return value;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

}  // namespace perftune
