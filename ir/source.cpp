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

struct RegisteredFormat {
  std::string suffix, description;
  SourceLoader loader;
};

std::vector<RegisteredFormat>& registered_formats() {
  static std::vector<RegisteredFormat> formats;
  return formats;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Corpus load_any_format(const std::string& path) {
  if (!path_exists(path)) throw InputError(path, "", "an existing file");
  if (std::filesystem::is_directory(path)) return load_record_folder(path);
  for (const RegisteredFormat& format : registered_formats())
    if (ends_with(path, format.suffix)) return format.loader(path);
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
  std::string others;
  for (const RegisteredFormat& format : registered_formats()) others += ", " + format.suffix + " (" + format.description + ")";
  throw InputError(path, "", "a supported source: .pb (XLA TPU tuning data), .json.gz (Kernel Tuner cache), "
                             ".npz (TpuGraphs), .jsonl or .jsonl.gz (record log), .json (perftune program)" + others + " or a folder of record logs");
}

}  // namespace

void register_source_format(const std::string& suffix, const std::string& description, SourceLoader loader) {
  for (RegisteredFormat& format : registered_formats())
    if (format.suffix == suffix) {
      format = {suffix, description, std::move(loader)};
      return;
    }
  registered_formats().push_back({suffix, description, std::move(loader)});
}

Corpus load_source(const std::string& path) {
  Corpus corpus = load_any_format(path);
  check_corpus_values(corpus);
  return corpus;
}

}  // namespace perftune
