#pragma once
// The measurement log: append-only JSON Lines, one self-contained record per line, versioned.
// The same file serves resume (what was measured), replay (a recorded backend) and training.
//
// Lines:  {"v":1,"type":"kernel","key":..., "name":..., "program":{...}, "knobs":[{"name","values"}]}
//         {"v":1,"type":"record","device":...,"kernel":key,"name":...,"config":{knob:value},
//          "status":"ok","seconds":...,"spread":...,"repeats":[...],"cost":...,"message":"","time":...}
//         {"v":1,"type":"reference", the fields of a record without "config", "reference":NAME,
//          "settings":...}: the kernel as another scheduler schedules it (ReferenceRecord)
// Each line reaches the OS in one write() as soon as it is appended, so a process killed at
// any moment loses at most the line being written; on load a torn last line is dropped with a
// warning, and reopening for append cuts it off first.
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ir/corpus.h"
#include "ir/measurement.h"

namespace perftune {

inline constexpr int kRecordLogVersion = 1;

struct KernelDefinition {
  Kernel kernel;
  std::shared_ptr<const SearchSpace> space;
};

struct LoadedLog {
  std::vector<Record> records;                     // duplicates merged, in file order
  std::vector<ReferenceRecord> references;         // in file order; a later one of the same
                                                   // (device, kernel, name) replaces an earlier
  std::map<std::string, KernelDefinition> kernels;  // by kernel key
  std::vector<std::string> warnings;               // torn last line, merged duplicates
  std::size_t duplicates_merged = 0;
};

class RecordLog {
 public:
  enum class Durability {
    kProcessCrash,  // write() per line: survives the process being killed (the default)
    kPowerLoss,     // plus fdatasync() per line: survives the machine going down, slower
  };

  // Opens `path` for appending, creating it and its folder. Throws std::runtime_error naming
  // the path when it cannot be opened.
  explicit RecordLog(std::string path, Durability durability = Durability::kProcessCrash);
  ~RecordLog();
  RecordLog(const RecordLog&) = delete;
  RecordLog& operator=(const RecordLog&) = delete;

  // Throws std::runtime_error (naming the path and errno) if the line cannot be written whole;
  // lines written before stay intact.
  void append(const Record& record);
  void append(const ReferenceRecord& reference);
  // Writes the kernel's definition once per key (later calls with the same key do nothing).
  void define_kernel(const Kernel& kernel, const SearchSpace& space);
  const std::string& path() const { return path_; }

  // Throws InputError naming the line for a corrupt line other than a torn last one, a record
  // with an unknown status, or a NaN/negative runtime.
  static LoadedLog load(const std::string& path);

 private:
  void write_line(const std::string& line);

  std::string path_;
  Durability durability_;
  int fd_ = -1;
  std::set<std::string> defined_kernels_;
};

// A kernel measured in one space: device, kernel key and knob names. A program's fusion space and
// its whole-program space share a kernel key but not their knobs.
using SpaceKey = std::tuple<std::string, std::string, std::vector<std::string>>;

// Records as a corpus: one MeasuredKernel per SpaceKey, with its successful
// references. Kernels without a definition line get an empty body and a space inferred from the
// records.
Corpus corpus_from_log(const LoadedLog& log, const std::string& path);

// The record's config in the space's knob order. A loaded log lists a record's knobs in its JSON
// object's order, which need not be the space's (nlohmann::json sorts keys), so match by name;
// nullopt when the knob sets differ (a record of another space).
std::optional<Config> in_space_order(const Record& record, const std::vector<std::string>& knob_names);

// JSON of one record line (exposed for the command backend protocol and tests).
std::string record_to_line(const Record& record);

}  // namespace perftune
