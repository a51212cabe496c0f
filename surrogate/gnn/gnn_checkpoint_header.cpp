#include "surrogate/gnn/gnn_checkpoint_header.h"

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "surrogate/checkpoint_files.h"

namespace perftune {

namespace {

// A vocabulary that no training run writes: more opcodes than the embedding has rows (ids past
// the table), or a knob's log-range that is reversed or beyond what an int64 knob value gives.
void check_vocabulary(const FeatureVocabulary& vocabulary, const GnnParams& params, const JsonView& json) {
  if (vocabulary.opcode_count() > static_cast<std::size_t>(params.opcode_capacity))
    json.at("opcodes").fail("at most " + std::to_string(params.opcode_capacity - 1) + " opcodes (params.opcode_capacity " +
                            std::to_string(params.opcode_capacity) + ", one id kept for \"other\"), found " +
                            std::to_string(vocabulary.opcodes().size()));
  check_knob_ranges(json);
}

}  // namespace

GnnCheckpointHeader read_gnn_checkpoint_header(const std::string& checkpoint) {
  // A file that is no checkpoint at all (the .pt weights, a campaign, an experiment) says so, rather
  // than naming the first checkpoint key it lacks.
  const std::string not_a_checkpoint = std::string("a model checkpoint: the JSON `perftune train` writes beside its .pt "
                                                   "weights ({\"format\": \"") + kGnnCheckpointFormat + "\", ...})";
  // What is wrong with the file itself (missing, not a regular file, too large) says so as it is.
  const std::string text = read_file(checkpoint);
  nlohmann::json json;
  try {
    json = parse_json_text(text, checkpoint);
  } catch (const InputError& error) {
    // A key twice or a number out of range is JSON with a flaw, named as such; only a syntax error is "not JSON".
    if (std::string(error.what()).find("valid JSON") == std::string::npos) throw;
    throw InputError(checkpoint, error.place(), not_a_checkpoint + "; this is not JSON");
  }
  if (!json.is_object() || !json.contains("format") || json["format"] != kGnnCheckpointFormat)
    throw InputError(checkpoint, "$", not_a_checkpoint + "; this file has no such \"format\"");
  const JsonView view(json, checkpoint);
  view.expect_keys({"format", "feature_schema_version", "weights", "params", "train", "vocabulary", "correction_scale", "extra"});
  check_feature_schema(view.at("feature_schema_version"));
  // Every field is checked before the model is built: its sizes allocate (GnnParams bounds them).
  GnnParams params = GnnParams::from_json(view.at("params"));
  FeatureVocabulary vocabulary = FeatureVocabulary::from_json(view.at("vocabulary"));
  check_vocabulary(vocabulary, params, view.at("vocabulary"));
  GnnCheckpointHeader header{std::move(params), std::move(vocabulary), TrainOptions::from_json(view.at("train")),
                             checkpoint_member_path(checkpoint, view.at("weights"))};
  if (auto scale = view.find("correction_scale")) {
    header.correction_scale = scale->as_non_negative_number();
    if (header.correction_scale > 1) scale->fail("a factor in [0, 1]");
  }
  if (!path_exists(header.weights)) throw InputError(header.weights, "", "the weights file named by " + checkpoint);
  return header;
}

}  // namespace perftune
