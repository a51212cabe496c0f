#include <catch2/catch.hpp>

#include <cmath>
#include <map>

#include "ir/file_io.h"
#include "ir/fusion.h"
#include "ir/input_error.h"
#include "ir/program_json.h"
#include "ir/record_log.h"
#include "ir/source.h"
#include "ir/tpu_tuning_data.h"
#include "tuning_data.pb.h"
#include "test_support.h"

using namespace perftune;

namespace {

const MeasuredKernel& kernel_named(const Corpus& corpus, const std::string& name) {
  for (const auto& k : corpus.kernels)
    if (k.kernel.name() == name) return k;
  FAIL("no kernel named " << name);
  throw std::logic_error("unreachable");
}

// (default - best) / best for one kernel.
double default_slowdown(const MeasuredKernel& k) {
  const double best = k.measurements.at(*k.best_index()).result.seconds;
  return (k.measurements.at(*k.default_index).result.seconds - best) / best;
}

}  // namespace

TEST_CASE("op_tuning_data.pb: 15 kernels, 754 runs, the README's per-kernel run counts") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/op_tuning_data.pb");
  const Corpus corpus = load_source(path);
  REQUIRE(corpus.format == "tpu-op-tuning");
  REQUIRE(corpus.programs.empty());
  REQUIRE(corpus.kernels.size() == 15);
  REQUIRE(corpus.measurement_count() == 754);
  std::multiset<std::size_t> runs;
  for (const auto& k : corpus.kernels) {
    CAPTURE(k.kernel.name());
    runs.insert(k.measurements.size());
    REQUIRE(k.device == "tpu");
    REQUIRE(k.default_index.has_value());
    REQUIRE(k.space->is_recorded());
    const std::string first_knob = k.space->knob_names().front();
    REQUIRE((first_knob == "tile.out.0" || first_knob == kTpuRunKnob));
    for (const auto& m : k.measurements) REQUIRE(k.space->contains(m.config));
  }
  REQUIRE(runs == std::multiset<std::size_t>{581, 61, 23, 16, 16, 16, 11, 10, 5, 3, 3, 3, 2, 2, 2});
  REQUIRE(kernel_named(corpus, "fusion.191").measurements.size() == 581);
  REQUIRE(kernel_named(corpus, "fusion.232").measurements.size() == 61);
  // Convolution fusions carry kernel bounds too: with them every run of fusion.191 is distinct.
  REQUIRE(kernel_named(corpus, "fusion.191").space->size() == 581);
  REQUIRE(kernel_named(corpus, "fusion.191").space->knob_names().at(4) == "tile.kernel.0");
  // The reshapes record no tile bounds: runs are told apart by index.
  REQUIRE(kernel_named(corpus, "reshape.37").space->knob_names() == std::vector<std::string>{kTpuRunKnob});
}

// The data README says "1.8% on average, optimal on 10 of 15". Computed from the runs (any of
// compute_time_ns, compute_and_transfer_time_ns or compute_cycle_count; min, mean or median over
// repeated configs) the figures are 1.89% and 11 of 15: 1.8 is the truncated value, and the
// kernels with a non-zero slowdown are fusion.191 (10.35%), reshape.37 (13.66%), copy.24 (2.45%)
// and fusion.245 (1.89%). The per-kernel figures the README gives match to its rounding.
TEST_CASE("op_tuning_data.pb: XLA's default is ~1.9% slower than the best on average") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/op_tuning_data.pb");
  const Corpus corpus = load_tpu_tuning_data(path);
  double total = 0.0;
  int optimal = 0;
  for (const auto& k : corpus.kernels) {
    const double slowdown = default_slowdown(k);
    total += slowdown;
    optimal += slowdown == 0.0 ? 1 : 0;
  }
  CHECK(total / 15 == Approx(0.018909).margin(0.00001));
  CHECK(default_slowdown(kernel_named(corpus, "fusion.191")) == Approx(0.104).margin(0.0005));
  CHECK(default_slowdown(kernel_named(corpus, "reshape.37")) == Approx(0.137).margin(0.0005));
  CHECK(default_slowdown(kernel_named(corpus, "copy.24")) == Approx(0.0245).margin(0.0001));
  CHECK(default_slowdown(kernel_named(corpus, "fusion.245")) == Approx(0.0189).margin(0.0001));
  CHECK(optimal == 11);
}

TEST_CASE("op_tuning_data.pb: a fusion-rooted module's kernel is the fused computation") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/op_tuning_data.pb");
  const Corpus corpus = load_tpu_tuning_data(path);
  const Kernel& fused = kernel_named(corpus, "fusion.232").kernel;
  REQUIRE(fused.body().name() == "fused_computation.17.clone");
  REQUIRE_FALSE(fused.parameters().empty());
  bool has_reduce_body = false;
  for (OpId id = 0; id < fused.body().size(); ++id)
    if (fused.body().op(id).opcode == "reduce") has_reduce_body |= !fused.body().op(id).called.empty();
  REQUIRE(has_reduce_body);  // region_0.169 stays attached as Op::called
  // Not fused: the entry computation itself (a parameter and the copy).
  const Kernel& copy = kernel_named(corpus, "copy.24").kernel;
  REQUIRE(copy.body().size() == 2);
  REQUIRE(copy.body().op(copy.body().root()).opcode == "copy");
  // Tile knobs follow the root's rank.
  REQUIRE(kernel_named(corpus, "copy.24").space->dimension() == copy.body().op(copy.body().root()).shape.dims.size());
}

TEST_CASE("module_tuning_data_layout.pb: one whole program, 3,163 instructions in 143 computations, 122 runs") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/module_tuning_data_layout.pb");
  REQUIRE(detect_tpu_layout(read_file(path)) == TpuLayout::kModuleTuningData);
  const Corpus corpus = load_source(path);
  REQUIRE(corpus.format == "tpu-module-tuning");
  REQUIRE(corpus.programs.size() == 1);
  const Program& program = *corpus.programs.front();
  REQUIRE(program.name() == "main__.10904");
  REQUIRE(program.instruction_count_with_called() == 3163);
  REQUIRE(program.computation_count_with_called() == 143);
  REQUIRE(corpus.program_measurements.size() == 122);
  REQUIRE(corpus.failed_count() == 10);
  REQUIRE(corpus.kernels.empty());  // before fusion: no fusion instruction yet
  std::map<std::string, int> opcodes;
  for (OpId id = 0; id < program.size(); ++id) ++opcodes[program.op(id).opcode];
  REQUIRE(opcodes["fusion"] == 0);
  REQUIRE(opcodes["convolution"] > 0);
  // The entry is the graph fusion decisions are made on: it partitions into kernels.
  const FusionPlan plan = partition(program, FusionConfig::greedy_elementwise(program));
  REQUIRE(plan.kernels.size() < program.size());
}

TEST_CASE("op_tuning_data.pb is detected as wrapped TuningData") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/op_tuning_data.pb");
  REQUIRE(detect_tpu_layout(read_file(path)) == TpuLayout::kTuningData);
}

TEST_CASE("a truncated TPU file names the module and the byte where it breaks") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/op_tuning_data.pb");
  const std::string bytes = read_file(path);
  const auto cut = GENERATE(100, 20000, 40213, 61000);
  CAPTURE(cut);
  const std::string truncated = bytes.substr(0, static_cast<std::size_t>(cut));
  REQUIRE_THROWS_MATCHES(parse_tpu_tuning_data(truncated, "op_tuning_data.pb"), InputError,
                         Catch::Matchers::Predicate<InputError>([](const InputError& e) {
                           const std::string what = e.what();
                           return what.find("op_tuning_data.pb: module ") == 0 && what.find(" at byte ") != std::string::npos &&
                                  what.find("a complete ModuleTuningData message") != std::string::npos &&
                                  what.find("the file ends early") != std::string::npos;
                         }));
}

TEST_CASE("a truncated bare ModuleTuningData names the module, not a TuningData entry") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/module_tuning_data_layout.pb");
  const std::string bytes = read_file(path);
  REQUIRE_THROWS_WITH(parse_tpu_tuning_data(bytes.substr(0, bytes.size() / 2), "layout.pb"),
                      Catch::StartsWith("layout.pb: module at byte 0: a complete HloModuleProto message"));
}

TEST_CASE("garbage is not a TPU file") {
  REQUIRE_THROWS_AS(parse_tpu_tuning_data("{\"not\": \"protobuf\"}", "x.pb"), InputError);
  REQUIRE_THROWS_AS(parse_tpu_tuning_data("", "empty.pb"), InputError);
}

TEST_CASE("negative times and unknown element types in TPU data name the module and run") {
  proto::TuningData data;
  auto* m = data.add_modules();
  auto* module = m->mutable_module();
  module->set_name("fusion.1");
  auto* c = module->add_computations();
  c->set_name("entry");
  c->set_id(1);
  auto* p = c->add_instructions();
  p->set_name("p0");
  p->set_opcode("parameter");
  p->set_id(1);
  p->mutable_shape()->set_element_type(11);
  p->mutable_shape()->add_dimensions(8);
  auto* e = c->add_instructions();
  e->set_name("exp");
  e->set_opcode("exponential");
  e->set_id(2);
  e->add_operand_ids(1);
  e->mutable_shape()->set_element_type(11);
  e->mutable_shape()->add_dimensions(8);
  c->set_root_id(2);
  module->set_entry_computation_id(1);
  for (int t : {100, 50}) {
    auto* run = m->add_runs();
    run->mutable_op_config()->mutable_tile_size_config()->add_output_bounds(t / 10);
    run->mutable_profile()->set_compute_time_ns(t);
  }
  {
    const Corpus ok = parse_tpu_tuning_data(data.SerializeAsString(), "ok.pb");
    REQUIRE(ok.kernels.size() == 1);
    REQUIRE(ok.kernels[0].measurements[1].result.seconds == Approx(50e-9));
    REQUIRE(ok.kernels[0].kernel.body().edges().size() == 1);
  }
  SECTION("negative time") {
    m->mutable_runs(1)->mutable_profile()->set_compute_time_ns(-5);
    REQUIRE_THROWS_WITH(parse_tpu_tuning_data(data.SerializeAsString(), "neg.pb"),
                        Catch::Contains("neg.pb: module 0 ('fusion.1'), run 1") && Catch::Contains("non-negative"));
  }
  SECTION("a negative or huge dimension, which the record log would refuse to read back") {
    for (std::int64_t bad : {std::int64_t{-3}, std::int64_t{1} << 62}) {
      e->mutable_shape()->set_dimensions(0, bad);
      REQUIRE_THROWS_WITH(parse_tpu_tuning_data(data.SerializeAsString(), "dim.pb"),
                          Catch::Contains("dim.pb: module 0 ('fusion.1')") && Catch::Contains("instruction 'exp'") &&
                              Catch::Contains("dimension 0: a dimension in [0, 2^32"));
    }
  }
  SECTION("a runtime of 0 ns") {
    m->mutable_runs(1)->mutable_profile()->set_compute_time_ns(0);
    REQUIRE_THROWS_WITH(parse_tpu_tuning_data(data.SerializeAsString(), "zero.pb"), Catch::Contains("zero.pb: module 0 ('fusion.1'), run 1"));
  }
  SECTION("unknown element type") {
    e->mutable_shape()->set_element_type(99);
    REQUIRE_THROWS_WITH(parse_tpu_tuning_data(data.SerializeAsString(), "type.pb"),
                        Catch::Contains("instruction 'exp'") && Catch::Contains("99"));
  }
  SECTION("an operand from another computation") {
    e->set_operand_ids(0, 77);
    REQUIRE_THROWS_WITH(parse_tpu_tuning_data(data.SerializeAsString(), "operand.pb"), Catch::Contains("same computation"));
  }
  SECTION("a failed run is data") {
    m->mutable_runs(0)->set_error(true);
    const Corpus corpus = parse_tpu_tuning_data(data.SerializeAsString(), "failed.pb");
    REQUIRE(corpus.failed_count() == 1);
    REQUIRE(corpus.kernels[0].measurements[0].result.status == MeasureStatus::kRuntimeError);
    REQUIRE(corpus.kernels[0].measurements[0].result.message == "recorded as failed");
  }
}

TEST_CASE("TPU kernels survive the record log: definition written, reloaded with the same key") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/op_tuning_data.pb");
  const Corpus corpus = load_tpu_tuning_data(path);
  const std::string log_path = scratch_dir("tpu_log") + "/log.jsonl";
  {
    RecordLog log(log_path);
    for (const auto& k : corpus.kernels) {
      log.define_kernel(k.kernel, *k.space);
      for (const auto& m : k.measurements)
        log.append(Record{k.device, k.kernel.key(), k.kernel.name(), k.space->knob_names(), m.config, m.result, 0.0});
    }
  }
  const LoadedLog loaded = RecordLog::load(log_path);
  REQUIRE(loaded.kernels.size() == 15);
  for (const auto& k : corpus.kernels) {
    CAPTURE(k.kernel.name());
    const KernelDefinition& d = loaded.kernels.at(k.kernel.key());
    REQUIRE(d.kernel.body().instruction_count_with_called() == k.kernel.body().instruction_count_with_called());
    REQUIRE(*d.space->size() == *k.space->size());
  }
  // Repeated configs were measured more than once; the log merges them.
  REQUIRE(loaded.records.size() + loaded.duplicates_merged == 754);
}

TEST_CASE("the whole TPU program round-trips through the JSON program format with its called computations") {
  PERFTUNE_REQUIRE_DATA(path, "tpu/module_tuning_data_layout.pb");
  const Corpus corpus = load_tpu_tuning_data(path);
  const Program& program = *corpus.programs.at(0);
  const std::string dir = scratch_dir("tpu_program_json");
  save_program_file(program, dir + "/main.json");
  const Program again = load_program_file(dir + "/main.json");
  REQUIRE(again.instruction_count_with_called() == 3163);
  REQUIRE(again.computation_count_with_called() == 143);
  REQUIRE(content_key(again) == content_key(program));
}
