#include "ir/kernel_tuner_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"

namespace perftune {

namespace {

constexpr double kSecondsPerMs = 1e-3;

// Kernel Tuner's failure markers (kernel_tuner/util.py: CompilationFailedConfig, RuntimeFailedConfig,
// InvalidConfig).
constexpr const char* kCompileFailed = "CompilationFailedConfig";
constexpr const char* kRuntimeFailed = "RuntimeFailedConfig";
constexpr const char* kInvalidConfig = "InvalidConfig";
// Measurement overheads Kernel Tuner records per config, in ms.
constexpr const char* kCostFields[] = {"compile_time", "verification_time", "benchmark_time", "framework_time"};

// An integral JSON number that fits an int64 knob value (the cast of a larger one is undefined).
bool is_integer_value(const nlohmann::json& v) {
  constexpr double kLimit = 9.2e18;  // just below 2^63
  if (!v.is_number()) return false;
  const double x = v.get<double>();
  return std::isfinite(x) && x == std::floor(x) && std::fabs(x) <= kLimit;
}

// One knob: its name, the tune_params values, and whether values map to themselves or to indices.
struct Param {
  std::string name;
  std::vector<nlohmann::json> values;
  bool by_index = false;

  // Knob value for a JSON value; nullopt if it is not one of the tune_params values.
  std::optional<std::int64_t> encode(const nlohmann::json& v) const {
    if (!by_index) {
      if (!is_integer_value(v)) return std::nullopt;
      const auto x = static_cast<std::int64_t>(v.get<double>());
      for (const auto& known : values)
        if (static_cast<std::int64_t>(known.get<double>()) == x) return x;
      return std::nullopt;
    }
    for (std::size_t i = 0; i < values.size(); ++i)
      if (values[i] == v) return static_cast<std::int64_t>(i);
    return std::nullopt;
  }
  Knob knob() const {
    Knob k{name, {}};
    for (std::size_t i = 0; i < values.size(); ++i)
      k.values.push_back(by_index ? static_cast<std::int64_t>(i) : static_cast<std::int64_t>(values[i].get<double>()));
    std::sort(k.values.begin(), k.values.end());
    k.values.erase(std::unique(k.values.begin(), k.values.end()), k.values.end());
    return k;
  }
};

std::vector<Param> read_params(const JsonView& root) {
  std::vector<Param> params;
  const JsonView tune_params = root.at("tune_params");
  for (const std::string& name : root.at("tune_params_keys").as_string_list()) {
    const JsonView values = tune_params.at(name);
    if (!values.is_array() || values.size() == 0) values.fail("a non-empty list of values");
    Param p{name, {}, false};
    for (const auto& v : values.value()) {
      p.values.push_back(v);
      if (!is_integer_value(v)) p.by_index = true;
    }
    params.push_back(std::move(p));
  }
  if (params.empty()) root.at("tune_params_keys").fail("at least one tunable parameter");
  return params;
}

// Reads one record straight from the JSON (this loop runs 18k times for a GEMM cache); a JsonView
// with the record's path is made only to report a problem.
MeasureResult read_result(const nlohmann::json& entry, const std::string& file, const std::string& path) {
  auto view = [&](const char* member) { return JsonView(entry, file, path).at(member); };
  double cost_ms = 0.0;
  for (const char* field : kCostFields) {
    const auto it = entry.find(field);
    if (it == entry.end()) continue;
    if (!it->is_number() || !(it->get<double>() >= 0)) view(field).fail("a non-negative time in ms");
    cost_ms += it->get<double>();
  }
  const double cost = cost_ms * kSecondsPerMs;
  const auto time = entry.find("time");
  if (time == entry.end()) JsonView(entry, file, path).fail("a member \"time\"");
  if (time->is_string()) {
    const std::string& text = time->get_ref<const std::string&>();
    if (text == kCompileFailed) return MeasureResult::failure(MeasureStatus::kCompileError, text, cost);
    if (text == kRuntimeFailed) return MeasureResult::failure(MeasureStatus::kRuntimeError, text, cost);
    if (text == kInvalidConfig) return MeasureResult::failure(MeasureStatus::kInvalidConfig, text, cost);
    // "3.2" or "fast" is no failure Kernel Tuner writes: a damaged or hand-edited cache.
    view("time").fail("a runtime in ms (a number) or one of Kernel Tuner's failure markers " + std::string(kCompileFailed) + ", " +
                      kRuntimeFailed + ", " + kInvalidConfig + "; found the string \"" + text + "\"");
  }
  if (!time->is_number()) view("time").fail("a runtime in ms or a failure string such as \"" + std::string(kRuntimeFailed) + "\"");
  const double seconds = time->get<double>() * kSecondsPerMs;
  if (auto problem = runtime_problem(seconds)) view("time").fail("a valid runtime, but " + *problem);
  std::vector<double> repeats;
  if (const auto times = entry.find("times"); times != entry.end()) {
    if (!times->is_array()) view("times").fail("a list of runtimes in ms");
    repeats.reserve(times->size());
    for (std::size_t i = 0; i < times->size(); ++i) {
      const auto& t = (*times)[i];
      const double r = t.is_number() ? t.get<double>() * kSecondsPerMs : NAN;
      if (auto problem = runtime_problem(r)) view("times").at(i).fail("a valid runtime in ms, but " + *problem);
      repeats.push_back(r);
    }
  }
  if (repeats.empty()) repeats.push_back(seconds);
  MeasureResult result = MeasureResult::from_repeats(std::move(repeats), cost);
  result.seconds = seconds;  // Kernel Tuner's objective is the mean; keep it as recorded
  return result;
}

// Kernel Tuner keys a cache entry by its parameter values joined with commas in tune_params_keys
// order (Python's str() of each). A key that disagrees with the entry's values means the cache was
// edited or damaged: which of the two was measured is unknown.
bool key_matches_values(const std::string& key, const nlohmann::json& entry, const std::vector<Param>& params) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::size_t end = i + 1 == params.size() ? key.size() : key.find(',', start);
    if (end == std::string::npos) return false;
    const std::string part = key.substr(start, end - start);
    start = end + 1;
    const nlohmann::json& value = entry.at(params[i].name);
    if (value.is_string()) {
      if (part != value.get_ref<const std::string&>()) return false;
    } else if (value.is_number()) {
      char* parsed_end = nullptr;
      const double x = std::strtod(part.c_str(), &parsed_end);
      if (parsed_end == part.c_str() || *parsed_end != '\0' || x != value.get<double>()) return false;
    }  // booleans and lists: Python's spelling is not worth re-deriving; their values are checked above
  }
  return true;
}

std::optional<Config> default_config(const nlohmann::json& space, const std::vector<Param>& params, const std::string& file) {
  const JsonView root(space, file);
  std::map<std::string, nlohmann::json> defaults;
  for (const JsonView& p : root.at("ConfigurationSpace").at("TuningParameters").elements())
    if (auto d = p.find("Default")) defaults[p.at("Name").as_string()] = d->value();
  Config config;
  for (const Param& p : params) {
    const auto it = defaults.find(p.name);
    if (it == defaults.end()) return std::nullopt;
    const auto value = p.encode(it->second);
    if (!value) return std::nullopt;  // a default outside the cached values: no default in this space
    config.values.push_back(*value);
  }
  return config;
}

}  // namespace

bool is_kernel_tuner_cache(const nlohmann::json& json) { return json.is_object() && json.contains("cache"); }

Corpus kernel_tuner_corpus(const nlohmann::json& json, const std::string& file, const std::optional<nlohmann::json>& space_json) {
  const JsonView root(json, file);
  const std::vector<Param> params = read_params(root);

  Program body(root.at("kernel_name").as_string());
  Op op;
  op.name = body.name();
  op.opcode = body.name();
  if (auto size = root.find("problem_size")) {
    op.shape.dims = size->as_int_list();
    for (std::size_t d = 0; d < op.shape.dims.size(); ++d)
      if (auto problem = dimension_problem(op.shape.dims[d])) size->at(d).fail("a problem size that is " + *problem);
  }
  body.add_op(std::move(op));

  MeasuredKernel measured;
  measured.device = root.get_string("device_name", "");
  if (measured.device.empty()) {
    std::string stem = std::filesystem::path(file).filename().string();
    measured.device = stem.substr(0, stem.find('.'));
  }
  std::string kernel_name = body.name();
  measured.kernel = Kernel(std::move(kernel_name), std::move(body));

  const JsonView cache = root.at("cache");
  if (!cache.is_object()) cache.fail("an object from config key to its measurement");
  measured.measurements.reserve(cache.value().size());
  std::vector<Config> configs;
  configs.reserve(cache.value().size());
  for (const auto& item : cache.value().items()) {
    const nlohmann::json& entry = item.value();
    const std::string path = cache.path() + "[\"" + item.key() + "\"]";
    if (!entry.is_object()) JsonView(entry, file, path).fail("an object with the parameters and the time of one config");
    Config config;
    config.values.reserve(params.size());
    for (const Param& p : params) {
      const auto it = entry.find(p.name);
      const auto value = it == entry.end() ? std::nullopt : p.encode(*it);
      if (!value) JsonView(entry, file, path).at(p.name).fail("one of the tune_params values of '" + p.name + "'");
      config.values.push_back(*value);
    }
    if (!key_matches_values(item.key(), entry, params))
      JsonView(entry, file, path).fail("the parameter values its key names (the key and the values disagree: the cache was edited or damaged)");
    configs.push_back(config);
    measured.measurements.push_back(Measurement{std::move(config), read_result(entry, file, path)});
  }
  if (configs.empty()) cache.fail("at least one measured config (an empty space cannot be tuned)");
  std::vector<Knob> knobs;
  for (const Param& p : params) knobs.push_back(p.knob());
  measured.space = std::make_shared<SearchSpace>(SearchSpace::recorded(std::move(knobs), configs));

  if (space_json)
    if (auto config = default_config(*space_json, params, file + " (space.json)"))
      for (std::size_t i = 0; i < measured.measurements.size(); ++i)
        if (measured.measurements[i].config == *config) {
          measured.default_index = i;
          break;
        }

  return single_kernel_corpus("kernel-tuner", file, std::move(measured));
}

Corpus load_kernel_tuner_cache(const std::string& path) {
  return load_kernel_tuner_cache(parse_json_text(read_maybe_gzip(path), path), path);
}

Corpus load_kernel_tuner_cache(const nlohmann::json& json, const std::string& path) {
  if (!is_kernel_tuner_cache(json)) throw InputError(path, "$", "a Kernel Tuner cache (an object with a \"cache\" member)");
  std::optional<nlohmann::json> space;
  const auto space_path = std::filesystem::path(path).parent_path() / "space.json";
  if (path_exists(space_path.string())) space = parse_json_file(space_path.string());
  Corpus corpus = kernel_tuner_corpus(json, path, space);
  // Moved away from its space.json, a cache silently lost its default (speedups then count from
  // the median config): say where it was looked for.
  if (!space)
    corpus.notes.push_back("no default config: it is named by the \"Default\" values of a Kernel Tuner space.json in the cache's own folder, and there is no " +
                           space_path.string());
  return corpus;
}

}  // namespace perftune
