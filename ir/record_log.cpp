#include "ir/record_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "ir/file_io.h"
#include "ir/input_error.h"
#include "ir/json_view.h"
#include "ir/program_json.h"

namespace perftune {

namespace {

nlohmann::ordered_json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

std::string kernel_to_line(const Kernel& kernel, const SearchSpace& space) {
  nlohmann::ordered_json knobs = nlohmann::ordered_json::array();
  for (const Knob& knob : space.knobs()) knobs.push_back({{"name", knob.name}, {"values", knob.values}});
  nlohmann::ordered_json j;
  j["v"] = kRecordLogVersion;
  j["type"] = "kernel";
  j["key"] = kernel.key();
  j["name"] = kernel.name();
  j["program"] = program_to_json(kernel.body());
  j["knobs"] = knobs;
  if (space.is_recorded()) {
    nlohmann::ordered_json valid = nlohmann::ordered_json::array();
    for (const Config& c : space.enumerate()) valid.push_back(c.values);
    j["valid"] = valid;
  }
  return j.dump();
}

// A record line, or (without_config) a reference line's measurement, which has no config.
Record record_from_json(const JsonView& j, bool without_config = false) {
  Record r;
  r.device = j.at("device").as_string();
  r.kernel_key = j.at("kernel").as_string();
  r.kernel_name = j.get_string("name", "");
  if (!without_config) {
    const JsonView config = j.at("config");
    if (!config.is_object()) config.fail("an object of knob values");
    for (const auto& item : config.value().items()) {
      r.knob_names.push_back(item.key());
      r.config.values.push_back(config.at(item.key()).as_int());
    }
  }
  const auto status = parse_status(j.at("status").as_string());
  if (!status) j.at("status").fail("one of ok, compile_error, runtime_error, timeout, wrong_result, invalid_config, not_recorded");
  r.result.status = *status;
  if (r.result.ok()) {
    const JsonView seconds = j.at("seconds");
    if (seconds.value().is_null()) seconds.fail("a runtime in seconds (null means NaN, which an ok record cannot have)");
    r.result.seconds = seconds.as_number();
    if (auto problem = runtime_problem(r.result.seconds)) seconds.fail("a valid runtime, but " + *problem);
  }
  if (auto repeats = j.find("repeats"))
    for (const JsonView& repeat : repeats->elements()) {
      const double value = repeat.as_number();
      if (auto problem = runtime_problem(value)) repeat.fail("a valid runtime, but " + *problem);
      r.result.repeats.push_back(value);
    }
  r.result.spread = j.get_number("spread", 0.0);
  if (auto problem = spread_problem(r.result.spread)) j.at("spread").fail("a valid spread, but " + *problem);
  r.result.cost_seconds = j.get_number("cost", 0.0);
  if (auto problem = cost_problem(r.result.cost_seconds)) j.at("cost").fail("a valid measurement cost, but " + *problem);
  r.result.message = j.get_string("message", "");
  r.unix_time = j.get_number("time", 0.0);
  if (auto problem = unix_time_problem(r.unix_time)) j.at("time").fail("a valid time of measurement, but " + *problem);
  return r;
}

KernelDefinition kernel_from_json(const JsonView& j) {
  Program body = program_from_json(j.at("program"));
  std::vector<Knob> knobs;
  for (const JsonView& k : j.at("knobs").elements()) knobs.push_back(Knob{k.at("name").as_string(), k.at("values").as_int_list()});
  std::shared_ptr<const SearchSpace> space;
  try {
    if (auto valid = j.find("valid")) {
      std::vector<Config> configs;
      for (const JsonView& c : valid->elements()) configs.push_back(Config{c.as_int_list()});
      space = std::make_shared<SearchSpace>(SearchSpace::recorded(knobs, configs));
    } else {
      space = std::make_shared<SearchSpace>(knobs);
    }
  } catch (const std::invalid_argument& e) {
    j.at("knobs").fail(std::string("a valid search space: ") + e.what());
  }
  // The name is read before the body is moved: argument evaluation order is unspecified.
  std::string name = j.get_string("name", body.name());
  KernelDefinition definition{Kernel(std::move(name), std::move(body)), space};
  if (definition.kernel.key() != j.at("key").as_string())
    j.at("key").fail("the content key of the program (" + definition.kernel.key() + "); the kernel was edited or the log corrupted");
  return definition;
}

// nlohmann::json sorts object keys, so record_from_json sees knobs alphabetically; the log
// wrote them in the space's order, which is what configs mean. Restore it from the line itself.
void keep_written_knob_order(const std::string& line, Record& record) {
  if (record.knob_names.size() < 2) return;
  const auto ordered = nlohmann::ordered_json::parse(line);
  std::vector<std::string> names;
  std::vector<std::int64_t> values;
  for (const auto& item : ordered.at("config").items()) {
    names.push_back(item.key());
    values.push_back(item.value().get<std::int64_t>());
  }
  record.knob_names = std::move(names);
  record.config.values = std::move(values);
}

nlohmann::ordered_json record_json(const Record& r) {
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < r.knob_names.size() && k < r.config.values.size(); ++k) config[r.knob_names[k]] = r.config.values[k];
  nlohmann::ordered_json j;
  j["v"] = kRecordLogVersion;
  j["type"] = "record";
  j["device"] = r.device;
  j["kernel"] = r.kernel_key;
  j["name"] = r.kernel_name;
  j["config"] = config;
  j["status"] = std::string(status_name(r.result.status));
  j["seconds"] = finite_or_null(r.result.seconds);
  j["spread"] = finite_or_null(r.result.spread);
  nlohmann::ordered_json repeats = nlohmann::ordered_json::array();
  for (double x : r.result.repeats) repeats.push_back(finite_or_null(x));
  j["repeats"] = repeats;
  j["cost"] = r.result.cost_seconds;
  if (!r.result.message.empty()) j["message"] = r.result.message;
  j["time"] = r.unix_time;
  return j;
}

}  // namespace

std::string record_to_line(const Record& r) { return record_json(r).dump(); }

RecordLog::RecordLog(std::string path, Durability durability) : path_(std::move(path)), durability_(durability) {
  const auto parent = std::filesystem::path(path_).parent_path();
  std::error_code ignored;
  if (!parent.empty()) std::filesystem::create_directories(parent, ignored);
  // O_NONBLOCK so that a FIFO cannot hold the open; only a regular file is kept (below).
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd_ < 0) throw std::runtime_error("cannot open record log " + path_ + " for appending: " + std::strerror(errno));
  // A log that is a device (a symlink to /dev/zero) or a FIFO takes every record and keeps none:
  // the campaign would end "complete" with nothing to resume or train on.
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    const char* kind = S_ISFIFO(info.st_mode) ? "a FIFO (named pipe)" : S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode) ? "a device" : "not a regular file";
    throw InputError(path_, "", std::string("a record log: a regular file (or a symlink to one) that keeps what is written, but this is ") + kind);
  }
  if (const int flags = ::fcntl(fd_, F_GETFL); flags >= 0) (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  // A line torn by a kill must not be glued to the next record: cut the file back to its last newline.
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  if (size > 0) {
    off_t end = size;
    char c = 0;
    while (end > 0 && ::pread(fd_, &c, 1, end - 1) == 1 && c != '\n') --end;
    if (end != size && ::ftruncate(fd_, end) != 0)
      throw std::runtime_error("cannot cut the torn last line of record log " + path_ + ": " + std::strerror(errno));
  }
  // Remember which kernels are already defined so reopening does not define them again.
  if (size > 0) {
    std::ifstream in(path_);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find("\"type\":\"kernel\"") == std::string::npos) continue;
      try {
        const auto j = nlohmann::json::parse(line);
        defined_kernels_.insert(j.at("key").get<std::string>());
      } catch (const std::exception&) {
        // load() reports corrupt lines; here a damaged definition only means it is written again.
      }
    }
  }
}

RecordLog::~RecordLog() {
  if (fd_ >= 0) ::close(fd_);
}

void RecordLog::write_line(const std::string& text) {
  const std::string line = text + "\n";
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      // Do not leave half a line behind: the next open would drop it, but a reader now would not.
      if (written > 0) {
        const off_t size = ::lseek(fd_, 0, SEEK_END);
        if (size >= static_cast<off_t>(written)) (void)::ftruncate(fd_, size - static_cast<off_t>(written));
      }
      throw std::runtime_error("cannot write to record log " + path_ + ": " +
                               (n < 0 ? std::strerror(error) : "no space left") +
                               "; every record written before is intact");
    }
    written += static_cast<std::size_t>(n);
  }
  if (durability_ == Durability::kPowerLoss && ::fdatasync(fd_) != 0)
    throw std::runtime_error("cannot sync record log " + path_ + ": " + std::strerror(errno));
}

void RecordLog::append(const Record& record) { write_line(record_to_line(record)); }

void RecordLog::append(const ReferenceRecord& reference) {
  nlohmann::ordered_json j = record_json(reference.measured);
  j["type"] = "reference";
  j.erase("config");
  j["reference"] = reference.name;
  j["settings"] = reference.settings;
  write_line(j.dump());
}

void RecordLog::define_kernel(const Kernel& kernel, const SearchSpace& space) {
  if (defined_kernels_.count(kernel.key())) return;
  write_line(kernel_to_line(kernel, space));
  defined_kernels_.insert(kernel.key());
}

LoadedLog RecordLog::load(const std::string& path) {
  const std::string text = read_maybe_gzip(path);  // a committed corpus is gzipped

  LoadedLog log;
  using RecordKey = std::tuple<std::string, std::string, std::vector<std::int64_t>>;
  std::map<RecordKey, std::size_t> index_of;
  std::size_t line_number = 0, start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    const bool torn = end == std::string::npos;
    if (torn) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      // perftune writes no empty line: one before more records means the log was spliced or
      // damaged, and what stood there is lost. Only a blank tail (an editor's last newline) is harmless.
      if (text.find_first_not_of(" \t\r\n", start > text.size() ? text.size() : start) == std::string::npos) break;
      throw InputError(path, "line " + std::to_string(line_number), "a JSON record (an empty line before more records: the log is damaged)");
    }
    const std::string place = "line " + std::to_string(line_number);
    nlohmann::json j;
    try {
      j = parse_json_unique_keys(line);
    } catch (const DuplicateJsonKey& error) {
      throw InputError(path, place, error.what());
    } catch (const nlohmann::json::exception&) {  // a syntax error, or a number out of double's range (found by fuzzing)
      if (torn) {
        log.warnings.push_back(path + ": " + place + ": dropped a torn last line (the writer was interrupted)");
        break;
      }
      throw InputError(path, place, "a complete JSON record (this line is corrupt)");
    }
    const JsonView view(j, path, place);
    if (!j.is_object()) view.fail("a JSON object");
    const auto version = view.at("v").as_int();
    if (version != kRecordLogVersion)
      view.at("v").fail("record log version " + std::to_string(kRecordLogVersion) + ", found " + std::to_string(version));
    const std::string type = view.at("type").as_string();
    if (type == "kernel") {
      KernelDefinition definition = kernel_from_json(view);
      log.kernels.emplace(definition.kernel.key(), std::move(definition));
    } else if (type == "record") {
      Record record = record_from_json(view);
      keep_written_knob_order(line, record);
      // Its kernel's definition comes first in a log perftune wrote: the config must fit its space.
      if (const auto definition = log.kernels.find(record.kernel_key); definition != log.kernels.end())
        if (auto problem = named_config_problem(*definition->second.space, record.knob_names, record.config))
          view.at("config").fail(*problem);
      RecordKey key{record.device, record.kernel_key, record.config.values};
      const auto [it, inserted] = index_of.emplace(key, log.records.size());
      if (inserted) {
        log.records.push_back(std::move(record));
      } else {
        ++log.duplicates_merged;
        // A later success (a retried timeout) replaces an earlier failure; otherwise the first stays.
        if (!log.records[it->second].result.ok() && record.result.ok()) log.records[it->second] = std::move(record);
      }
    } else if (type == "reference") {
      ReferenceRecord reference{record_from_json(view, /*without_config=*/true), view.at("reference").as_string(),
                                view.get_string("settings", "")};
      const auto same = [&](const ReferenceRecord& r) {
        return r.name == reference.name && r.measured.device == reference.measured.device &&
               r.measured.kernel_key == reference.measured.kernel_key;
      };
      std::erase_if(log.references, same);
      log.references.push_back(std::move(reference));
    } else {
      view.at("type").fail("\"kernel\", \"record\" or \"reference\"");
    }
  }
  if (log.duplicates_merged > 0)
    log.warnings.push_back(path + ": merged " + std::to_string(log.duplicates_merged) + " duplicate record(s)");
  return log;
}

Corpus corpus_from_log(const LoadedLog& log, const std::string& path) {
  Corpus corpus;
  corpus.format = "record-log";
  corpus.path = path;
  // One kernel per space: a log without definitions (an experiment's memo) can hold two spaces of one key.
  std::map<SpaceKey, std::size_t> index;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> kernels_of;  // (device, key) -> spaces
  for (const Record& record : log.records) {
    const SpaceKey key{record.device, record.kernel_key, record.knob_names};
    auto it = index.find(key);
    if (it == index.end()) {
      MeasuredKernel measured;
      measured.device = record.device;
      const auto definition = log.kernels.find(record.kernel_key);
      if (definition != log.kernels.end()) {
        measured.kernel = definition->second.kernel;
        measured.space = definition->second.space;
      } else {
        measured.kernel = Kernel::opaque(record.kernel_name, record.kernel_key);
      }
      it = index.emplace(key, corpus.kernels.size()).first;
      kernels_of[{record.device, record.kernel_key}].push_back(corpus.kernels.size());
      corpus.kernels.push_back(std::move(measured));
    }
    corpus.kernels[it->second].measurements.push_back(Measurement{record.config, record.result});
  }
  for (const ReferenceRecord& reference : log.references)
    if (const auto it = kernels_of.find({reference.measured.device, reference.measured.kernel_key}); it != kernels_of.end())
      if (reference.measured.result.ok())
        for (std::size_t i : it->second) corpus.kernels[i].references[reference.name] = reference.measured.result.seconds;
  // Kernels without a definition: a recorded space over what was measured.
  for (const auto& [key, i] : index) {
    MeasuredKernel& measured = corpus.kernels[i];
    if (measured.space) continue;
    std::vector<Config> configs;
    for (const auto& m : measured.measurements) configs.push_back(m.config);
    try {
      measured.space = std::make_shared<SearchSpace>(SearchSpace::recorded(std::get<2>(key), configs));
    } catch (const std::invalid_argument& error) {
      throw InputError(path, "kernel " + measured.kernel.name(), std::string("records that form a search space: ") + error.what());
    }
  }
  return corpus;
}

std::optional<Config> in_space_order(const Record& record, const std::vector<std::string>& knob_names) {
  if (record.knob_names.size() != knob_names.size() || record.config.values.size() != knob_names.size()) return std::nullopt;
  if (record.knob_names == knob_names) return record.config;
  Config config;
  for (const std::string& name : knob_names) {
    const auto it = std::find(record.knob_names.begin(), record.knob_names.end(), name);
    if (it == record.knob_names.end()) return std::nullopt;
    config.values.push_back(record.config.values[static_cast<std::size_t>(it - record.knob_names.begin())]);
  }
  return config;
}

}  // namespace perftune
