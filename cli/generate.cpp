// perftune generate GENERATE.json [--count N] [--output DIR] [--json]: writes random tensor
// programs (offline/program_generator.h) as program files, NAME_00000.json ..., skipping those
// already written (program i depends only on the seed and i, so a rerun completes a corpus).
// perftune generate --derive SOURCE...: prints the size distributions and block mix of real
// programs (offline/program_statistics.h) as spec members, to paste into a spec.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "ir/output_lock.h"
#include "ir/program_json.h"
#include "offline/program_generator.h"
#include "offline/program_statistics.h"

namespace perftune::cli {
namespace {

struct GenerateOptions {
  std::string spec;
  std::uint64_t count = 0;
  std::string output;
  bool json = false;
  std::vector<std::string> derive;
};

void derive(const GenerateOptions& o) {
  std::vector<std::vector<Program>> sources;
  for (const std::string& path : o.derive) sources.push_back(programs_of_source(path));
  print_json(statistics_json(program_statistics(sources)).dump(2));
}

void run(const GenerateOptions& o) {
  if (!o.derive.empty()) return derive(o);
  if (o.spec.empty()) throw std::runtime_error("generate needs a spec file (or --derive SOURCE...)");
  GeneratorSpec spec = load_generator_spec(o.spec);
  if (o.count) spec.count = o.count;
  if (!o.output.empty()) spec.output = o.output;
  create_output_folder(spec.output);
  std::map<std::string, std::size_t> blocks, opcodes;
  std::size_t written = 0, ops = 0;
  double flops = 0;
  for (std::uint64_t i = 0; i < spec.count; ++i) {
    const GeneratedProgram generated = generate_program(spec, i);
    const std::string path = generated_program_path(spec, i);
    if (!std::filesystem::exists(path)) {
      save_program_file(generated.program, path);
      ++written;
    }
    for (const std::string& b : generated.blocks) ++blocks[b];
    for (OpId id = 0; id < generated.program.size(); ++id) ++opcodes[generated.program.op(id).opcode];
    ops += generated.program.size();
    flops += generated.flops;
  }
  const nlohmann::ordered_json summary = {{"spec", o.spec}, {"output", spec.output}, {"programs", spec.count},
                                          {"written", written}, {"ops", ops}, {"mean_flops", spec.count ? flops / spec.count : 0.0},
                                          {"blocks", blocks}, {"opcodes", opcodes}};
  if (o.json) {
    print_json(summary.dump(2));
    return;
  }
  std::cout << spec.count << " programs in " << spec.output << " (" << written << " written, " << ops << " ops, "
            << summary["mean_flops"].get<double>() / 1e6 << " MFLOP each on average)\nblocks:";
  for (const auto& [kind, n] : blocks) std::cout << " " << kind << " " << n;
  std::cout << "\n";
}

const bool registered = register_command({"generate", "Write random tensor programs for a training corpus, seeded and reproducible",
  [](CLI::App& app) {
    auto options = std::make_shared<GenerateOptions>();
    app.add_option("spec", options->spec, "Generator spec (configs/generate/*.json)")->check(CLI::ExistingFile);
    app.add_option("--derive", options->derive,
                   "Print the sizes and block mix of these real programs (files, folders of programs, XLA .pb) as spec members, each source weighing the same")
        ->check(CLI::ExistingPath);
    app.add_option("--count", options->count, "Number of programs (overrides the spec's)");
    app.add_option("--output", options->output, "Output folder (overrides the spec's)");
    app.add_flag("--json", options->json, "Print the summary as JSON");
    app.callback([options] { run(*options); });
  }});

}  // namespace
}  // namespace perftune::cli
