#include "surrogate/trees/tree_checkpoint_header.h"

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "surrogate/checkpoint_files.h"

namespace perftune {

bool is_tree_checkpoint(const nlohmann::json& json) {
  return json.is_object() && json.contains("format") && json["format"] == kTreeCheckpointFormat;
}

TreeCheckpointHeader read_tree_checkpoint_header(const std::string& checkpoint) {
  const nlohmann::json json = parse_json_file(checkpoint);
  if (!is_tree_checkpoint(json))
    throw InputError(checkpoint, "$.format", std::string("\"") + kTreeCheckpointFormat + "\" (a checkpoint perftune train writes for trees)");
  const JsonView view(json, checkpoint);
  view.expect_keys({"format", "feature_schema_version", "booster", "params", "vocabulary", "extra"});
  check_feature_schema(view.at("feature_schema_version"));
  TreeParams params = TreeParams::from_json(view.at("params"));
  check_knob_ranges(view.at("vocabulary"));
  TreeCheckpointHeader header{std::move(params), FeatureVocabulary::from_json(view.at("vocabulary")),
                              checkpoint_member_path(checkpoint, view.at("booster"))};
  if (!path_exists(header.booster)) throw InputError(header.booster, "", "the booster file named by " + checkpoint);
  return header;
}

}  // namespace perftune
