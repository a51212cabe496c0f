#include "ir/tpu_tuning_data.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>

#include <climits>
#include <optional>
#include <unordered_set>

#include "ir/file_io.h"
#include "ir/hlo_program.h"
#include "ir/input_error.h"
#include "ir/knob_roles.h"

namespace perftune {

namespace {

std::string tile_kernel_knob(std::size_t d) { return "tile.kernel." + std::to_string(d); }
std::string tile_in_knob(std::size_t d) { return "tile.in." + std::to_string(d); }
std::string tile_iteration_knob(std::size_t d) { return "tile.iter." + std::to_string(d); }

// Wire types of the protobuf encoding (protobuf's encoding documentation).
constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

struct Field {
  int number = 0;
  int wire = 0;
  std::size_t offset = 0;          // of its tag
  std::size_t payload_offset = 0;  // length-delimited fields only
  std::size_t payload_size = 0;
  std::uint64_t varint = 0;
};

struct Problem {
  Field field;          // as far as it was read (number 0 when the tag itself is bad)
  std::string what;     // what was expected there
  bool truncated_payload = false;
};

struct Scan {
  std::vector<Field> fields;
  std::optional<Problem> problem;
};

// Splits a serialized message into its top-level fields without interpreting them, so that a
// truncated or corrupt file can be reported at the field where it goes wrong.
Scan scan_fields(const char* data, std::size_t size) {
  Scan scan;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(data), static_cast<int>(size));
  in.SetTotalBytesLimit(INT_MAX);
  while (static_cast<std::size_t>(in.CurrentPosition()) < size) {
    Field field;
    field.offset = static_cast<std::size_t>(in.CurrentPosition());
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) {
      scan.problem = Problem{field, "a protobuf field tag"};
      return scan;
    }
    field.number = static_cast<int>(tag >> 3);
    field.wire = static_cast<int>(tag & 7);
    bool ok = true;
    switch (field.wire) {
      case kVarint: ok = in.ReadVarint64(&field.varint); break;
      case kFixed64: { std::uint64_t v; ok = in.ReadLittleEndian64(&v); break; }
      case kFixed32: { std::uint32_t v; ok = in.ReadLittleEndian32(&v); break; }
      case kLengthDelimited: {
        std::uint32_t length = 0;
        if (!in.ReadVarint32(&length)) {
          scan.problem = Problem{field, "a length prefix, but the file ends early"};
          return scan;
        }
        field.payload_offset = static_cast<std::size_t>(in.CurrentPosition());
        field.payload_size = length;
        if (length > size - field.payload_offset) {
          scan.problem = Problem{field, "", true};
          return scan;
        }
        ok = in.Skip(static_cast<int>(length));
        break;
      }
      default:
        scan.problem = Problem{field, "a supported protobuf wire type (0, 1, 2 or 5), not " + std::to_string(field.wire)};
        return scan;
    }
    if (!ok) {
      scan.problem = Problem{field, "a complete field value, but the file ends early"};
      return scan;
    }
    scan.fields.push_back(field);
  }
  return scan;
}

// An HloModuleProto has entry_computation_name (2) as a string and ids (5, 6) as varints; a
// ModuleTuningData has fingerprint (2) as a varint and config_index_to_node (4).
bool looks_like_hlo_module(const char* data, std::size_t size) {
  const Scan inner = scan_fields(data, size);
  for (const Field& f : inner.fields) {
    if ((f.number == 2 && f.wire == kLengthDelimited) || ((f.number == 5 || f.number == 6) && f.wire == kVarint)) return true;
    if ((f.number == 2 && f.wire == kVarint) || f.number == 4) return false;
  }
  // A truncated payload: look at its first field's content (HloModuleProto.name is text,
  // ModuleTuningData.module is a message starting with a tag for field 1).
  return false;
}

TpuLayout detect(const std::string& bytes, const Scan& scan) {
  std::size_t ones = 0;
  const Field* single = nullptr;
  for (const Field& f : scan.fields) {
    if (f.number != 1) return TpuLayout::kModuleTuningData;
    ++ones;
    single = &f;
  }
  if (scan.problem && scan.problem->truncated_payload) {
    if (scan.problem->field.number != 1) return TpuLayout::kModuleTuningData;
    ++ones;
    single = &scan.problem->field;
  }
  if (ones != 1 || single->wire != kLengthDelimited) return TpuLayout::kTuningData;
  const std::size_t available = std::min(single->payload_size, bytes.size() - single->payload_offset);
  return looks_like_hlo_module(bytes.data() + single->payload_offset, available) ? TpuLayout::kModuleTuningData
                                                                                  : TpuLayout::kTuningData;
}

std::string at_byte(const std::string& what, std::size_t offset) { return what + " at byte " + std::to_string(offset); }

// What a top-level field is called in errors, by layout.
std::string field_name(TpuLayout layout, const Field& field, std::size_t ordinal) {
  if (layout == TpuLayout::kTuningData) return field.number == 1 ? "module " + std::to_string(ordinal) : "field " + std::to_string(field.number);
  switch (field.number) {
    case 1: return "module";
    case 2: return "fingerprint";
    case 3: return "run " + std::to_string(ordinal);
    case 4: return "config_index_to_node";
    default: return "field " + std::to_string(field.number);
  }
}

std::string message_name(TpuLayout layout, int number) {
  if (layout == TpuLayout::kTuningData) return number == 1 ? "ModuleTuningData" : "field";
  return number == 1 ? "HloModuleProto" : number == 3 ? "ConfigProfile" : "field";
}

template <typename Message>
void parse_payload(Message& message, const std::string& bytes, const Field& field, const std::string& file,
                   const std::string& name, const std::string& type) {
  if (field.wire != kLengthDelimited)
    throw InputError(file, at_byte(name, field.offset), "a length-delimited " + type + " (wire type 2), not wire type " + std::to_string(field.wire));
  if (!message.ParseFromArray(bytes.data() + field.payload_offset, static_cast<int>(field.payload_size)))
    throw InputError(file, at_byte(name, field.offset),
                     "a valid " + type + " message of " + std::to_string(field.payload_size) + " bytes, but protobuf cannot parse it");
}

std::vector<proto::ModuleTuningData> decode(const std::string& bytes, const std::string& file) {
  // protobuf prints "[libprotobuf ERROR ...]" on stderr for a message it cannot parse, before our
  // own one-line InputError says the same with the file and place: silence it while we decode.
  const google::protobuf::LogSilencer quiet;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) throw InputError(file, "", "a protobuf file smaller than 2 GiB");
  const Scan scan = scan_fields(bytes.data(), bytes.size());
  const TpuLayout layout = detect(bytes, scan);
  std::vector<std::size_t> ordinals(64, 0);
  auto ordinal_of = [&](int number) { return number < 64 ? ordinals[number]++ : 0; };
  std::vector<proto::ModuleTuningData> modules;
  if (layout == TpuLayout::kModuleTuningData) modules.emplace_back();
  for (const Field& f : scan.fields) {
    const std::string name = field_name(layout, f, ordinal_of(f.number));
    if (layout == TpuLayout::kTuningData) {
      if (f.number != 1) continue;  // unknown fields are skipped, as protobuf does
      parse_payload(modules.emplace_back(), bytes, f, file, name, "ModuleTuningData");
    } else if (f.number == 1) {
      parse_payload(*modules.back().mutable_module(), bytes, f, file, name, "HloModuleProto");
    } else if (f.number == 2 && f.wire == kVarint) {
      modules.back().set_fingerprint(f.varint);
    } else if (f.number == 3) {
      parse_payload(*modules.back().add_runs(), bytes, f, file, name, "ConfigProfile");
    }
  }
  if (scan.problem) {
    const Problem& p = *scan.problem;
    if (p.field.number == 0) throw InputError(file, "byte " + std::to_string(p.field.offset), p.what);
    const std::string name = field_name(layout, p.field, ordinal_of(p.field.number));
    if (p.truncated_payload)
      throw InputError(file, at_byte(name, p.field.offset),
                       "a complete " + message_name(layout, p.field.number) + " message of " + std::to_string(p.field.payload_size) +
                           " bytes, but the file ends early (" + std::to_string(bytes.size() - p.field.payload_offset) + " bytes left)");
    throw InputError(file, at_byte(name, p.field.offset), p.what);
  }
  if (modules.empty()) throw InputError(file, "", "a TuningData or ModuleTuningData message with at least one module");
  return modules;
}

MeasureResult measure_run(const proto::ConfigProfile& run, const std::string& file, const std::string& place) {
  const std::int64_t ns = run.profile().compute_time_ns();
  if (ns < 0) throw InputError(file, place, "a non-negative compute_time_ns, not " + std::to_string(ns));
  const std::int64_t with_transfer = run.profile().compute_and_transfer_time_ns();
  if (with_transfer < 0) throw InputError(file, place, "a non-negative compute_and_transfer_time_ns, not " + std::to_string(with_transfer));
  // The data records no compile time; the run's own device time is what it cost at least.
  const double cost = 1e-9 * static_cast<double>(std::max(ns, with_transfer));
  if (run.error()) return MeasureResult::failure(MeasureStatus::kRuntimeError, "recorded as failed", cost);
  if (ns == 0) throw InputError(file, place, "a positive compute_time_ns for a run without `error`");
  return MeasureResult::from_repeats({1e-9 * static_cast<double>(ns)}, cost);
}

MeasuredKernel tile_kernel(const proto::ModuleTuningData& m, const HloModule& module, const std::string& file, const std::string& place) {
  const Program& entry = *module.entry;
  const Op& root = entry.op(entry.root());
  const bool fused = root.opcode == "fusion" && !root.called.empty();
  std::string name = module.name.empty() ? root.name : module.name;
  MeasuredKernel measured{Kernel(name, fused ? Program(*root.called.front()) : Program(entry)), nullptr, kTpuDevice, {}, std::nullopt};
  // Knob groups in order; each run must give every group the length run 0 gives it.
  using Bounds = google::protobuf::RepeatedField<std::int64_t>;
  struct Group { const char* field; std::string (*knob)(std::size_t); const Bounds& (proto::TileSizeConfig::*get)() const; };
  static const Group kGroups[] = {
      {"output_bounds", tile_out_knob, &proto::TileSizeConfig::output_bounds},
      {"kernel_bounds", tile_kernel_knob, &proto::TileSizeConfig::kernel_bounds},
      {"input_bounds", tile_in_knob, &proto::TileSizeConfig::input_bounds},
      {"iteration_bounds", tile_iteration_knob, &proto::TileSizeConfig::iteration_bounds},
  };
  std::vector<std::string> knobs;
  std::vector<int> lengths;
  for (const Group& g : kGroups) {
    lengths.push_back(((m.runs(0).op_config().tile_size_config()).*(g.get))().size());
    for (int d = 0; d < lengths.back(); ++d) knobs.push_back(g.knob(static_cast<std::size_t>(d)));
  }
  // Some modules (reshape.37/38/39) record an empty tile_size_config for every run: the runs
  // differ in something the data does not say, so they are told apart by their index.
  const bool by_index = knobs.empty();
  if (by_index) knobs.push_back(kTpuRunKnob);
  std::vector<Config> configs;
  for (int r = 0; r < m.runs_size(); ++r) {
    const auto& run = m.runs(r);
    const std::string where = place + ", run " + std::to_string(r);
    if (!run.has_op_config()) throw InputError(file, where, "an op_config like the module's other runs");
    Config config;
    for (std::size_t g = 0; g < std::size(kGroups); ++g) {
      const Bounds& bounds = (run.op_config().tile_size_config().*(kGroups[g].get))();
      if (bounds.size() != lengths[g])
        throw InputError(file, where, std::string(kGroups[g].field) + " with " + std::to_string(lengths[g]) + " entries like run 0, not " +
                                          std::to_string(bounds.size()));
      config.values.insert(config.values.end(), bounds.begin(), bounds.end());
    }
    if (by_index) config.values.push_back(r);
    configs.push_back(config);
    measured.measurements.push_back(Measurement{std::move(config), measure_run(run, file, where)});
    if (run.is_default()) {
      if (measured.default_index) throw InputError(file, where, "at most one run with is_default");
      measured.default_index = static_cast<std::size_t>(r);
    }
  }
  measured.space = std::make_shared<SearchSpace>(SearchSpace::recorded(knobs, configs));
  return measured;
}

// Every `fusion` instruction's fused computation, once per computation, as a kernel to be measured.
void add_fusion_kernels(const HloModule& module, Corpus& corpus) {
  std::unordered_set<const Program*> seen;
  auto visit = [&](const Program& program) {
    for (OpId id = 0; id < program.size(); ++id) {
      const Op& op = program.op(id);
      if (op.opcode != "fusion" || op.called.empty() || !seen.insert(op.called.front().get()).second) continue;
      corpus.kernels.push_back(MeasuredKernel{Kernel(op.name, Program(*op.called.front())), nullptr, kTpuDevice, {}, std::nullopt});
    }
  };
  visit(*module.entry);
  for (const auto& [id, program] : module.computations)
    if (program != module.entry) visit(*program);
}

}  // namespace

TpuLayout detect_tpu_layout(const std::string& bytes) { return detect(bytes, scan_fields(bytes.data(), bytes.size())); }

Corpus parse_tpu_tuning_data(const std::string& bytes, const std::string& file) {
  const std::vector<proto::ModuleTuningData> modules = decode(bytes, file);
  const bool bare = detect_tpu_layout(bytes) == TpuLayout::kModuleTuningData;
  Corpus corpus;
  corpus.path = file;
  for (std::size_t i = 0; i < modules.size(); ++i) {
    const proto::ModuleTuningData& m = modules[i];
    const std::string place = (bare ? std::string("module") : "module " + std::to_string(i)) + " ('" + m.module().name() + "')";
    const HloModule module = import_hlo_module(m.module(), file, place);
    const bool tiles = m.runs_size() > 0 && m.runs(0).has_op_config();
    if (tiles) {
      corpus.kernels.push_back(tile_kernel(m, module, file, place));
      continue;
    }
    auto program = std::make_shared<Program>(*module.entry);
    program->set_name(module.name.empty() ? program->name() : module.name);
    corpus.programs.push_back(program);
    for (int r = 0; r < m.runs_size(); ++r) {
      const std::string where = place + ", run " + std::to_string(r);
      if (m.runs(r).has_op_config()) throw InputError(file, where, "a module_config like the module's run 0");
      corpus.program_measurements.push_back(Measurement{Config{}, measure_run(m.runs(r), file, where)});
    }
    add_fusion_kernels(module, corpus);
  }
  corpus.format = corpus.programs.empty() ? "tpu-op-tuning" : "tpu-module-tuning";
  return corpus;
}

Corpus load_tpu_tuning_data(const std::string& path) { return parse_tpu_tuning_data(read_file(path), path); }

}  // namespace perftune
