// perftune remeasure COLLECT.json --output LOG [--spaces fusion|tile|all] [--rounds N]: measures a
// collected corpus's configs again in more sittings and writes the log with each runtime the median
// over them (offline/corpus_remeasure.h); rerunning resumes where it stopped.
#include <functional>
#include <iostream>
#include <memory>
#include <unistd.h>

#include "cli/command.h"
#include "hardware/halide/halide_backend.h"
#include "hardware/wrappers/first_measure_hook.h"
#include "offline/corpus_collection.h"
#include "offline/corpus_remeasure.h"
#include "offline/machine_check.h"

namespace perftune::cli {
namespace {

struct RemeasureOptions {
  std::string config;
  std::string output;
  std::string rounds_folder;
  std::string spaces = "fusion";
  std::size_t rounds = 3;
  bool json = false;
};

const bool registered = register_command({"remeasure", "Measure a collected corpus's configs again in more sittings; each runtime becomes the median over them (resumable)",
  [](CLI::App& app) {
    auto o = std::make_shared<RemeasureOptions>();
    app.add_option("config", o->config, "The collect config the corpus was measured with (configs/collect/*.json): its log and measurement settings")
        ->required()->check(CLI::ExistingFile);
    app.add_option("--output", o->output, "Record log to write, once every round is measured (may be the corpus itself)")->required();
    app.add_option("--spaces", o->spaces, "Which records: fusion (whole-program fusion placements), tile (kernel schedules) or all")
        ->capture_default_str();
    app.add_option("--rounds", o->rounds, "Sittings to add: each a fresh worker, every config once, in a shuffled order")
        ->capture_default_str()->check(CLI::Range(1, 100));
    app.add_option("--rounds-folder", o->rounds_folder, "Where the rounds' logs go, one folder per kernel (default: OUTPUT.rounds)");
    app.add_flag("--json", o->json, "Print the summary as JSON");
    app.callback([o] {
      const CollectSpec collect = load_collect_spec(o->config);
      const std::optional<RemeasuredSpaces> spaces = parse_remeasured_spaces(o->spaces);
      if (!spaces) throw std::runtime_error("--spaces: expected fusion, tile or all, got \"" + o->spaces + "\"");
      if (o->output.ends_with(".gz")) throw std::runtime_error("--output: a plain .jsonl path (gzip it afterwards), got " + o->output);
      const CorpusRemeasureSpec spec{collect.output, o->output, o->rounds_folder.empty() ? o->output + ".rounds" : o->rounds_folder,
                                     o->rounds, *spaces};
      const bool terminal = ::isatty(2);
      // Which machine this sitting measured on (offline/machine_check.h): checked once, before the
      // first round that measures (every round makes a fresh backend).
      const std::function<void()> check = machine_check_hook("remeasure", collect.cpu.threads,
                                                             spec.output + ".machine_checks.jsonl", &std::cerr);
      const CorpusRemeasureSummary summary = remeasure_corpus(
          spec, [&] { return std::make_unique<FirstMeasureHook>(std::make_unique<HalideBackend>(collect.cpu), check); }, nullptr,
          [&](const CollectProgress& p) {
            std::cerr << (terminal ? "\r" : "") << progress_bar(p) << (terminal ? "" : "\n") << std::flush;
          });
      if (terminal) std::cerr << "\n";
      if (!summary.complete) throw std::runtime_error("stopped before every round was measured: run it again to resume");
      if (o->json) {
        nlohmann::ordered_json j;
        j["input"] = spec.input;
        j["output"] = spec.output;
        j["device"] = summary.device;
        j["rounds"] = spec.rounds;
        j["spaces"] = summary.spaces;
        j["records"] = summary.configs;
        j["other_device"] = summary.other_device;
        j["failed_median"] = summary.failed_median;
        j["median_change"] = summary.median_change;
        print_json(j.dump(2));
      } else {
        std::cout << spec.output << ": " << summary.configs << " records of " << summary.spaces << " spaces re-measured in " << spec.rounds
                  << " rounds (median change " << 100.0 * summary.median_change << "%); " << summary.failed_median
                  << " left as recorded (their median over sittings a failure), " << summary.other_device << " another device's\n";
      }
    });
  }});

}  // namespace
}  // namespace perftune::cli
