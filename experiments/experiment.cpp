#include "experiments/experiment.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "ir/count_limits.h"
#include "ir/data_path.h"
#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/stable_hash.h"

namespace perftune {

namespace {

nlohmann::json campaign_json(const Experiment& experiment, std::size_t space, std::size_t strategy, std::uint64_t seed,
                             const std::string& output, const std::vector<std::string>* prior_spaces) {
  const ExperimentSpace& s = experiment.spaces[space];
  const ExperimentStrategy& t = experiment.strategies[strategy];
  // Absolute: the campaign would resolve a relative path against the experiment file's folder again.
  auto checkpoint = [&](const std::string& name) {
    return std::filesystem::absolute(pretrained_checkpoint_path(experiment.output, name, *t.pretrain)).lexically_normal().string();
  };
  nlohmann::json model = t.model;
  if (t.pretrain && !t.pretrain->per_source) {
    model = {{"type", "learned"}, {"checkpoint", checkpoint(s.name)}};
  } else if (t.pretrain) {
    // Until the sources are known (loaded), every space stands in: the check never opens them.
    nlohmann::json paths = nlohmann::json::array();
    if (prior_spaces)
      for (const std::string& name : *prior_spaces) paths.push_back(checkpoint(name));
    else
      for (const ExperimentSpace& other : experiment.spaces) paths.push_back(checkpoint(other.name));
    model = {{"type", "learned"}, {"checkpoints", paths}};
  } else if (t.recorded_other_devices) {
    nlohmann::json paths = nlohmann::json::array();
    for (const ExperimentSpace& other : experiment.spaces)
      if (other.source.contains("path") &&
          (!prior_spaces || std::find(prior_spaces->begin(), prior_spaces->end(), other.name) != prior_spaces->end()))
        paths.push_back(other.source["path"]);
    model["sources"] = paths;
  }
  if (t.pretrain && t.model.contains("residual")) model["residual"] = t.model["residual"];
  nlohmann::json json = {{"name", experiment.name + ":" + s.name + ":" + t.name + ":" + std::to_string(seed)},
                         {"source", s.source},
                         {"backend", experiment.backend},
                         {"model", model},
                         {"strategy", t.strategy},
                         {"budget", experiment.budget},
                         {"epsilon", experiment.epsilon},
                         {"seed", seed},
                         {"output", output}};
  if (experiment.top_k) json["top_k"] = *experiment.top_k;
  if (experiment.ramp_batches) json["ramp_batches"] = true;  // absent when off: earlier runs keep their identity
  if (t.confirm_close_best) json["confirm_close_best"] = *t.confirm_close_best;
  if (s.default_config) json["default"] = *s.default_config;
  return json;
}

// A campaign error's place, translated to where that section sits in the experiment file.
std::string experiment_place(const std::string& campaign_place, std::size_t space, std::size_t strategy) {
  auto under = [&](std::string_view section, const std::string& prefix) -> std::optional<std::string> {
    const std::string head = "$." + std::string(section);
    if (campaign_place == head || campaign_place.starts_with(head + ".") || campaign_place.starts_with(head + "["))
      return prefix + "." + std::string(section) + campaign_place.substr(head.size());
    return std::nullopt;
  };
  const std::string space_prefix = "$.spaces[" + std::to_string(space) + "]";
  const std::string strategy_prefix = "$.strategies[" + std::to_string(strategy) + "]";
  for (const char* section : {"source", "default"})
    if (auto place = under(section, space_prefix)) return *place;
  for (const char* section : {"strategy", "model", "confirm_close_best"})
    if (auto place = under(section, strategy_prefix)) return *place;
  return campaign_place;
}

}  // namespace

std::size_t Experiment::max_measurements() const {
  return budget.contains("measurements") && budget["measurements"].is_number_integer()
             ? budget["measurements"].get<std::size_t>()
             : 0;
}

Experiment load_experiment(const std::string& path) { return parse_experiment(parse_json_file(path), path); }

Experiment parse_experiment(const nlohmann::json& json, const std::string& file) {
  const JsonView root(json, file);
  root.expect_keys({"name", "description", "spaces", "strategies", "backend", "budget", "top_k", "ramp_batches", "epsilon", "seeds",
                    "first_seed", "report_budgets", "time_windows", "measure_once", "remeasure", "output"});
  Experiment experiment;
  experiment.file = file;
  experiment.name = root.has("name") ? root.at("name").as_string() : std::filesystem::path(file).stem().string();
  experiment.description = root.get_string("description", "");

  const std::string base_dir = std::filesystem::path(file).parent_path().string();
  auto resolve = [&](const std::string& value) { return resolve_config_path(value, base_dir.empty() ? "." : base_dir); };

  std::set<std::string> names;
  const JsonView spaces = root.at("spaces");
  if (spaces.size() == 0) spaces.fail("at least one space");
  for (const JsonView& view : spaces.elements()) {
    view.expect_keys({"name", "source", "default", "role"});
    ExperimentSpace space;
    space.name = view.at("name").as_string();
    if (space.name.empty() || space.name.find("..") != std::string::npos || space.name.front() == '/')
      view.at("name").fail("a name usable as a relative folder (e.g. \"gemm/RTX_Titan\")");
    if (!names.insert(space.name).second) view.at("name").fail("a space name not used before (\"" + space.name + "\" is)");
    space.source = view.at("source").value();
    if (view.has("default")) space.default_config = view.at("default").value();
    if (const auto role = view.find("role")) {
      const std::string value = role->as_string();
      if (value == "target") space.role = SpaceRole::kTarget;
      else if (value == "source") space.role = SpaceRole::kSource;
      else role->fail("\"target\" (tuned, never a source for another space) or \"source\" (a source only, not tuned); "
                      "without a role a space is both");
    }
    experiment.spaces.push_back(std::move(space));
  }
  if (std::none_of(experiment.spaces.begin(), experiment.spaces.end(), [](const ExperimentSpace& s) { return s.tuned(); }))
    spaces.fail("at least one space to tune (every space has \"role\": \"source\")");
  names.clear();
  const JsonView strategies = root.at("strategies");
  if (strategies.size() == 0) strategies.fail("at least one strategy");
  for (const JsonView& view : strategies.elements()) {
    view.expect_keys({"name", "strategy", "model", "confirm_close_best"});
    ExperimentStrategy strategy;
    strategy.name = view.at("name").as_string();
    if (strategy.name.empty() || strategy.name.find_first_of("/\\\"\n,") != std::string::npos)
      view.at("name").fail("a non-empty label without '/', '\\', '\"', ',' or a newline");
    if (!names.insert(strategy.name).second)
      view.at("name").fail("a strategy name not used before (\"" + strategy.name + "\" is)");
    strategy.strategy = view.at("strategy").value();
    if (const auto v = view.find("confirm_close_best")) strategy.confirm_close_best = v->as_number();  // checked as a campaign
    strategy.model = view.has("model") ? view.at("model").value() : nlohmann::json{{"type", "none"}};
    if (view.has("model")) strategy.pretrain = parse_pretrain_spec(view.at("model"), resolve);
    // A recorded reference naming its sources by rule rather than by path (ModelSpec checks the rest).
    if (const auto model = view.find("model"); model && model->is_object() && model->has("type") &&
                                               model->at("type").value() == "recorded" && model->has("sources") &&
                                               model->at("sources").value().is_string()) {
      if (model->at("sources").as_string() != "other_devices")
        model->at("sources").fail("a list of recordings, or \"other_devices\" (each space's other devices of its kernel)");
      strategy.recorded_other_devices = true;
    }
    experiment.strategies.push_back(std::move(strategy));
  }

  experiment.backend = root.at("backend").value();
  experiment.budget = root.at("budget").value();
  if (const auto measurements = root.at("budget").find("measurements"))  // the campaigns read the rest
    bounded_count(*measurements, 1, kMaxMeasurementBudget, "measurements");
  if (const auto v = root.find("top_k")) experiment.top_k = static_cast<std::size_t>(v->as_positive_int());
  if (const auto v = root.find("ramp_batches")) experiment.ramp_batches = v->as_bool();
  if (const auto v = root.find("measure_once")) {
    if (v->value().is_boolean()) experiment.measure_once = v->as_bool();
    else if (v->as_string() == "experiment") experiment.memo_scope = MemoScope::kExperiment;
    else if (v->as_string() != "sitting") v->fail("true, false, \"sitting\" or \"experiment\"");
  }
  experiment.epsilon = root.get_number("epsilon", experiment.epsilon);
  experiment.seeds = static_cast<std::size_t>(bounded_count(root.at("seeds"), 1, kMaxSeeds, "seeds"));
  if (const auto v = root.find("first_seed")) experiment.first_seed = v->as_count();
  if (const auto v = root.find("report_budgets")) {
    experiment.report_budgets.clear();
    for (const JsonView& b : v->elements()) experiment.report_budgets.push_back(static_cast<std::size_t>(bounded_count(b, 1, kMaxMeasurementBudget, "measurements")));
    if (experiment.report_budgets.empty()) v->fail("at least one budget");
  }
  if (const auto v = root.find("time_windows")) {
    experiment.time_windows.clear();
    for (const JsonView& w : v->elements()) {
      w.expect_keys({"start", "end"});
      const double start = w.at("start").as_number(), end = w.at("end").as_number();
      if (!(start >= 0 && start < end && end <= 1))
        w.fail("a window {\"start\": p, \"end\": q} with 0 <= p < q <= 1 (fractions of the way from the median to the optimum)");
      experiment.time_windows.push_back({start, end});
    }
    if (experiment.time_windows.empty()) v->fail("at least one window");
  }
  if (const auto v = root.find("remeasure")) {
    v->expect_keys({"repeats", "top", "references"});
    RemeasurePlan plan;
    if (const auto repeats = v->find("repeats")) plan.repeats = static_cast<std::size_t>(repeats->as_positive_int());
    if (const auto top = v->find("top")) plan.top = static_cast<std::size_t>(top->as_count());
    // Checked when the experiment runs, before its first run: a config naming a campaign's output
    // folder parses on a machine that has not unpacked it.
    if (const auto references = v->find("references"))
      for (const JsonView& reference : references->elements()) plan.references.push_back(resolve(reference.as_string()));
    experiment.remeasure = plan;
  }
  experiment.output = resolve(root.get_string("output", "../../runs/" + experiment.name));
  // Check every pair now: a typo in the last strategy must not wait for the first ones to run.
  for (std::size_t s = 0; s < experiment.spaces.size(); ++s)
    for (std::size_t t = 0; t < experiment.strategies.size(); ++t)
      experiment_campaign(experiment, s, t, experiment.first_seed, experiment.output);
  return experiment;
}

Campaign experiment_campaign(const Experiment& experiment, std::size_t space, std::size_t strategy, std::uint64_t seed,
                             const std::string& output, const std::vector<std::string>* prior_spaces) {
  try {
    return parse_campaign(campaign_json(experiment, space, strategy, seed, output, prior_spaces), experiment.file);
  } catch (const InputError& error) {
    const std::string prefix_length_probe = InputError(error.file(), error.place(), "").what();
    const std::string expected = std::string(error.what()).substr(prefix_length_probe.size());
    throw InputError(experiment.file, experiment_place(error.place(), space, strategy), expected);
  }
}

namespace {

// What a checkpoint JSON holds as a model: its bytes, except that the wall-clock seconds of the
// training report ensure_pretrained (experiments/pretraining/pretraining.h) writes into it, under
// extra.training and each of its members, are left out: two trainings of the same weights take
// different times. A file without such a report (or not JSON) is its bytes unchanged. (Here, not
// beside ensure_pretrained, so that this file stays free of libtorch for the fuzz targets.)
std::string checkpoint_definition(const std::string& checkpoint) {
  std::string bytes = read_file(checkpoint);
  nlohmann::json json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("extra") || !json["extra"].is_object() || !json["extra"].contains("training") ||
      !json["extra"]["training"].is_object())
    return bytes;
  nlohmann::json& training = json["extra"]["training"];
  training.erase("seconds");
  if (training.contains("members") && training["members"].is_array())
    for (nlohmann::json& member : training["members"])
      if (member.is_object()) member.erase("seconds");
  return json.dump();
}

// A file a run reads, named by what it holds: the same bytes are the same input wherever they lie
// (a checkout moved, the data mounted elsewhere), and a program edited in place is another space.
// Every run of a space names the same files, so each one's hash is kept while its size and write
// time stay (a recording is megabytes, a space hundreds of runs).
std::string content_name(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::string, std::string>> names;  // path -> {stamp, name}
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return path;  // not a file here: the campaign's own check names it
  const auto written = std::filesystem::last_write_time(path, error);
  const std::string stamp = std::to_string(size) + "@" + std::to_string(written.time_since_epoch().count());
  std::lock_guard lock(mutex);
  auto& [known_stamp, name] = names[path];
  if (known_stamp != stamp) {
    name = "content " + stable_hash_hex(read_file(path));
    known_stamp = stamp;
  }
  return name;
}

// The files a run's campaign names as its space (source "path" or "program") and as a recorded
// reference's sources, replaced by content_name of the paths `parsed` resolved them to.
void name_files_by_content(nlohmann::json& campaign, const Campaign& parsed) {
  if (!parsed.source.path.empty()) campaign["source"]["path"] = content_name(parsed.source.path);
  if (!parsed.source.program.empty()) campaign["source"]["program"] = content_name(parsed.source.program);
  if (nlohmann::json& model = campaign["model"]; model.contains("sources") && model["sources"].is_array())
    for (std::size_t i = 0; i < model["sources"].size() && i < parsed.model.recordings.size(); ++i)
      model["sources"][i] = content_name(parsed.model.recordings[i]);
}

std::string identity_of(const Experiment& experiment, std::size_t space, std::size_t strategy, std::uint64_t seed,
                        const std::vector<std::string>* prior_spaces, bool files_by_content) {
  nlohmann::json json = campaign_json(experiment, space, strategy, seed, "", prior_spaces);
  // Checked by experiment_campaign when the experiment was loaded: the paths it resolves are wanted here.
  const Campaign parsed = parse_campaign(json, experiment.file);
  const ModelSpec& model = parsed.model;
  json.erase("output");
  if (files_by_content) name_files_by_content(json, parsed);
  std::string identity = json.dump();
  // A checkpoint is named by its path; retrained in place (perftune train), it is another model,
  // unless the training reproduced it (the same weights and report; only its duration differs).
  std::vector<std::string> checkpoints = model.checkpoints;
  if (!model.checkpoint.empty()) checkpoints.push_back(model.checkpoint);
  for (const std::string& checkpoint : checkpoints) {
    if (path_exists(checkpoint)) identity += "\n" + checkpoint + " " + stable_hash_hex(checkpoint_definition(checkpoint));
    const std::string weights = std::filesystem::path(checkpoint).replace_extension(".pt").string();
    if (path_exists(weights)) identity += "\n" + weights + " " + stable_hash_hex(read_file(weights));
  }
  // Where the experiment writes is not part of a run's definition: pre-trained checkpoints live in
  // its output folder, so without this a results folder copied or moved (--output elsewhere)
  // would run everything again although every model and curve is the same.
  const std::string folder = std::filesystem::absolute(experiment.output).lexically_normal().string() + "/";
  for (std::size_t at = identity.find(folder); at != std::string::npos; at = identity.find(folder, at))
    identity.replace(at, folder.size(), "${output}/");
  return stable_hash_hex(identity);
}

}  // namespace

std::string run_identity(const Experiment& experiment, std::size_t space, std::size_t strategy, std::uint64_t seed,
                         const std::vector<std::string>* prior_spaces) {
  return identity_of(experiment, space, strategy, seed, prior_spaces, /*files_by_content=*/true);
}

std::string path_named_run_identity(const Experiment& experiment, std::size_t space, std::size_t strategy,
                                    std::uint64_t seed, const std::vector<std::string>* prior_spaces) {
  return identity_of(experiment, space, strategy, seed, prior_spaces, /*files_by_content=*/false);
}

}  // namespace perftune
