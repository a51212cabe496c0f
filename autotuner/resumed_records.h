#pragma once
// The records a rerun resumes from: the output folder's record log, if there is one, with what
// its loading skipped said on `progress`.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "ir/record_log.h"

namespace perftune {

inline std::vector<Record> resumed_records(const std::string& records_path, std::ostream* progress) {
  if (!std::filesystem::exists(records_path)) return {};
  LoadedLog loaded = RecordLog::load(records_path);
  if (progress)
    for (const std::string& warning : loaded.warnings) *progress << "[tune] " << warning << "\n";
  return std::move(loaded.records);
}

}  // namespace perftune
