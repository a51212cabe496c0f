#pragma once
// The "backend" section of a campaign: which Backend measures, and its settings.
//   {"type": "replay", "cost": {...}}   a recording served (hardware/replay/replay_backend.h)
//   {"type": "cpu", ...}                Halide on this machine (hardware/halide/halide_backend.h)
//   {"type": "command", "commands": [...], ...}   your own runner (hardware/command/command_backend.h)
// Any backend may carry "faults" to rehearse bad hardware (hardware/wrappers/fault_injecting_backend.h).
// Every key, its default and range: docs/settings.md, generated from the tables below.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "hardware/backend.h"
#include "hardware/command/command_backend.h"
#include "hardware/halide/halide_backend.h"
#include "hardware/replay/replay_backend.h"
#include "hardware/wrappers/fault_injecting_backend.h"
#include "ir/corpus.h"
#include "ir/json_view.h"
#include "ir/settings_table.h"

namespace perftune {

struct BackendSpec {
  std::string type;  // "replay", "cpu", "command"
  ReplayCost replay_cost;
  HalideBackendOptions cpu;       // "cpu" only
  CommandBackendOptions command;  // "command" only
  std::optional<FaultPlan> faults;  // wraps the backend in a FaultInjectingBackend when set
  std::string file;  // where the spec was read, for errors
  std::string path;  // its JSON path
};

// Throws InputError naming the JSON path of an unknown key, a wrong type or an unknown backend.
BackendSpec parse_backend_spec(const JsonView& view);

// The keys of each backend's object, declared once (docs/settings.md; the cpu backend's are
// hardware/halide/halide_backend_json.h's).
const SettingsTable<ReplayCost>& replay_cost_settings();
const SettingsTable<CommandBackendOptions>& command_backend_settings();
const SettingsTable<FaultPlan>& fault_settings();

// What a backend's kind means for the loop around it; callers ask this, not the backend's name.
struct BackendTraits {
  // Its measurements are a recording, served, not run: the hardware time is charged, not spent on
  // the wall clock (so no search time share applies, and a replay proposes alike on any machine),
  // the space's default and optimum are known before tuning, and there are no live peers to time.
  bool recorded = false;
  // It answers a config the same every time (a recording without injected faults): a timeout is
  // not retried, and a fast time needs no confirmation.
  bool repeatable = false;
};
BackendTraits backend_traits(const BackendSpec& spec);

using BackendWrapper = std::function<std::unique_ptr<Backend>(std::unique_ptr<Backend>)>;

// Builds the backend; `recorded` is the campaign's source (replay serves it) and `device` the
// device chosen in it (both unused by live backends). `wrap_device`, when given, wraps the device
// backend below the fault layer: mpirun's RankSpreadBackend goes there, so that faults are drawn
// once, on rank 0, from the campaign's own sequence of attempts, as one process draws them (each
// rank's own fault layer counted attempts of its share only, and a confirmation sent to another
// rank met the very fault it was meant to see past).
std::unique_ptr<Backend> make_backend(const BackendSpec& spec, const Corpus& recorded, const std::string& device,
                                      const BackendWrapper& wrap_device = {});

}  // namespace perftune
