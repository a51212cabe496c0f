#pragma once
// The Halide backend's options as a JSON config writes them: a campaign's backend of type "cpu"
// (autotuner/factories/backend_factory.h) and collect's "cpu" object (corpus_collection.h) read
// them here, so the same key is accepted and checked alike in both.
#include <string>
#include <vector>

#include "hardware/halide/halide_backend.h"
#include "ir/json_view.h"
#include "ir/settings_table.h"

namespace perftune {

// Every key, its range and doc, declared once: the reader below and docs/settings.md come from it.
const SettingsTable<HalideBackendOptions>& halide_backend_settings();

// The keys read_halide_backend_options reads; a caller adds its own to check an object's keys.
const std::vector<std::string>& halide_backend_option_keys();

// Sets the fields of `options` whose keys `object` has; the others keep their values. Fails
// (InputError naming the file and key) on a value out of range.
void read_halide_backend_options(const JsonView& object, HalideBackendOptions& options);

}  // namespace perftune
