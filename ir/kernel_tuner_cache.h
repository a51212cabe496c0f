#pragma once
// Importer for Kernel Tuner cache files (../shared/data/kernel_tuner/**/*.json[.gz]): one
// MeasuredKernel per file, format "kernel-tuner".
//   kernel   a one-op program: opcode = kernel_name, shape = problem_size, so caches of the same
//            kernel measured on different GPUs share a content key
//   device   device_name (when the cache leaves it empty: the file's name without extensions)
//   knobs    tune_params_keys, in order. A parameter whose values are not all integers (e.g.
//            strings or fractions) is represented by the index of each value in its
//            tune_params list, and the knob's domain is those indices.
//   space    recorded over the cache's keys: Kernel Tuner measured every valid config, so an
//            absent combination violates the space's restrictions
//   records  time (ms, the mean of `times`) -> seconds; `times` -> repeats; cost = compile_time +
//            verification_time + benchmark_time + framework_time (ms -> s, those present);
//            "CompilationFailedConfig" -> kCompileError, "RuntimeFailedConfig" -> kRuntimeError,
//            any other string -> kRuntimeError with that text as the message
//   default  the "Default" values of a sibling space.json (Kernel Tuner's T1 format) when there is
//            one and that config is in the cache; else none (without a space.json in the cache's
//            folder, Corpus::notes says so: a cache moved elsewhere loses its default)
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/corpus.h"

namespace perftune {

// Throws InputError naming the file and the JSON path (or the line, for malformed JSON, or the
// byte offset, for a truncated gzip stream) of the first problem.
Corpus load_kernel_tuner_cache(const std::string& path);
// The same for a cache already parsed from `path` (its sibling space.json is still looked up).
Corpus load_kernel_tuner_cache(const nlohmann::json& json, const std::string& path);
// `space_json`: the parsed T1 space description, if any; `file` names the cache in errors.
Corpus kernel_tuner_corpus(const nlohmann::json& cache, const std::string& file,
                           const std::optional<nlohmann::json>& space_json = std::nullopt);
// True for a parsed JSON document that is a Kernel Tuner cache (an object with a "cache" member).
bool is_kernel_tuner_cache(const nlohmann::json& json);

}  // namespace perftune
