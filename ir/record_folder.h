#pragma once
// Every record log below a folder as one corpus: what an experiment measured (its output folder
// holds one log per run: runs/<space>/<strategy>/seed_<n>/records.jsonl), so `perftune eval` can
// rank a model on the configs a live tuning campaign measured.
//   - a kernel measured in the same space (device, kernel key and knob names) by several logs is
//     one MeasuredKernel; the fusion and the whole-program space of one program share a kernel
//     key but not their knobs, so they stay apart;
//   - a config measured by several logs keeps its first successful figure (the first failure if
//     it never succeeded), as one log merges its own duplicates;
//   - a reference (an autoscheduler's schedule) keeps the first log's figure;
//   - a kernel's body and space come from the first log that defines it (an experiment's memo,
//     measured_once.jsonl, holds records alone and is read first);
//   - *.jsonl files that are not record logs (e.g. Adams2019's samples.jsonl) are skipped, named
//     in the corpus notes.
#include <string>

#include "ir/corpus.h"

namespace perftune {

// Throws InputError naming the folder when it holds no record log, or naming the file and line
// of a corrupt one.
Corpus load_record_folder(const std::string& folder);

}  // namespace perftune
