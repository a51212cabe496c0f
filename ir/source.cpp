#include "ir/source.h"

#include <filesystem>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/kernel_tuner_cache.h"
#include "ir/program_json.h"
#include "ir/record_folder.h"
#include "ir/record_log.h"
#include "ir/tpu_tuning_data.h"
#include "ir/tpugraphs_npz.h"

namespace perftune {

namespace {
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Corpus load_any_format(const std::string& path) {
  if (!path_exists(path)) throw InputError(path, "", "an existing file");
  if (std::filesystem::is_directory(path)) return load_record_folder(path);
  if (ends_with(path, ".pb")) return load_tpu_tuning_data(path);
  if (ends_with(path, ".npz")) return load_tpugraphs_npz(path);
  if (ends_with(path, ".json.gz")) return load_kernel_tuner_cache(path);
  if (ends_with(path, ".jsonl") || ends_with(path, ".jsonl.gz")) {
    const LoadedLog log = RecordLog::load(path);
    Corpus corpus = corpus_from_log(log, path);
    corpus.notes.insert(corpus.notes.end(), log.warnings.begin(), log.warnings.end());
    return corpus;
  }
  if (ends_with(path, ".json")) {
    const nlohmann::json json = parse_json_file(path);
    if (is_kernel_tuner_cache(json)) return load_kernel_tuner_cache(json, path);
    Corpus corpus;
    corpus.path = path;
    corpus.format = "perftune-program";
    corpus.programs.push_back(std::make_shared<Program>(program_from_json(JsonView(json, path))));
    return corpus;
  }
  throw InputError(path, "", "a supported source: .pb (XLA TPU tuning data), .json.gz (Kernel Tuner cache), "
                             ".npz (TpuGraphs), .jsonl or .jsonl.gz (record log), .json (perftune program) or a folder of record logs");
}

}  // namespace

Corpus load_source(const std::string& path) {
  Corpus corpus = load_any_format(path);
  check_corpus_values(corpus);
  return corpus;
}

}  // namespace perftune
