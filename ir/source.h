#pragma once
// One entry point for every supported source format, chosen by the file's name and content:
//   *.pb                 XLA TPU tuning data (op_tuning_data.pb, module_tuning_data_layout.pb)
//   *.json.gz, cache *.json with "cache"   Kernel Tuner caches
//   *.npz                TpuGraphs tile files
//   *.jsonl, *.jsonl.gz  perftune record logs (gzip: a committed corpus)
//   *.json               perftune programs
//   a registered suffix  what its loader reads (*.onnx once the frontend is registered)
//   a folder             every record log below it, a space measured by several logs merged
//                        (an experiment's output: ir/record_folder.h)
#include <functional>
#include <string>

#include "ir/corpus.h"

namespace perftune {

// A format read by a layer above ir/ (the ONNX frontend: frontend/onnx_source.h), registered by
// the program at start-up so that load_source, and every command that takes a source, accepts it.
using SourceLoader = std::function<Corpus(const std::string& path)>;
void register_source_format(const std::string& suffix, const std::string& description, SourceLoader loader);

// Throws InputError for a file it cannot read or a format it does not know.
Corpus load_source(const std::string& path);

}  // namespace perftune
