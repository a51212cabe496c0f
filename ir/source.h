#pragma once
// One entry point for every supported source format, chosen by the file's name and content:
//   *.pb                 XLA TPU tuning data (op_tuning_data.pb, module_tuning_data_layout.pb)
//   *.json.gz, cache *.json with "cache"   Kernel Tuner caches
//   *.npz                TpuGraphs tile files
//   *.jsonl, *.jsonl.gz  perftune record logs (gzip: a committed corpus)
//   *.json               perftune programs
//   a folder             every record log below it, a space measured by several logs merged
//                        (an experiment's output: ir/record_folder.h)
#include <string>

#include "ir/corpus.h"

namespace perftune {

// Throws InputError for a file it cannot read or a format it does not know.
Corpus load_source(const std::string& path);

}  // namespace perftune
