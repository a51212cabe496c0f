#pragma once
// The files a checkpoint names (a GNN's .pt weights, a tree model's booster): one rule for where
// they may be, shared by both formats.
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>

#include "ir/json_view.h"

namespace perftune {

// The path of the file that the checkpoint's member `name` names, which must be a bare file name
// in the checkpoint's folder, as perftune train writes it: an absolute path, a folder or ".."
// would let a checkpoint read (and a later save overwrite) files elsewhere. Fails naming the member.
inline std::string checkpoint_member_path(const std::string& checkpoint, const JsonView& name) {
  const std::string file = name.as_string();
  if (file.empty() || file == "." || file == ".." || file.find('/') != std::string::npos || file.find('\0') != std::string::npos)
    name.fail("a bare file name beside the checkpoint (no folder, no \"..\"), as perftune train writes, not \"" + file + "\"");
  return (std::filesystem::path(checkpoint).parent_path() / file).string();
}

// A checkpoint's "vocabulary" knob log-ranges as training writes them: each "lo" and "hi" finite,
// within +-64 (signed_log2 of a 64-bit knob value) and lo <= hi. Fails naming the member.
inline void check_knob_ranges(const JsonView& vocabulary) {
  const auto knobs = vocabulary.find("knobs");
  if (!knobs || !knobs->is_object()) return;  // FeatureVocabulary::from_json names a missing or malformed one
  for (const auto& item : knobs->value().items()) {
    const JsonView entry = knobs->at(item.key());
    if (!entry.is_object() || !entry.has("lo") || !entry.has("hi")) continue;
    const double lo = entry.at("lo").as_number(), hi = entry.at("hi").as_number();
    for (const auto& [key, value] : {std::pair{"lo", lo}, std::pair{"hi", hi}})
      if (!(std::abs(value) <= 64.0)) entry.at(key).fail("a log2 knob bound within [-64, 64] (signed_log2 of a 64-bit knob value)");
    if (lo > hi) entry.at("lo").fail("a lower bound at most \"hi\" (" + std::to_string(hi) + ")");
  }
}

}  // namespace perftune
