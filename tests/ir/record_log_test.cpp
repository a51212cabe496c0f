#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "ir/input_error.h"
#include "ir/program_json.h"
#include "ir/record_log.h"
#include "ir/source.h"
#include "test_support.h"

using namespace perftune;

namespace {

Kernel toy_kernel() {
  Program p("toy");
  Op x{.name = "x", .opcode = "parameter", .shape = make_shape(ElementType::kF32, {32})};
  x.parameter_number = 0;
  const OpId id = p.add_op(x);
  p.add_op(Op{.name = "y", .opcode = "exponential", .shape = make_shape(ElementType::kF32, {32})}, {id});
  return Kernel("toy", std::move(p));
}

SearchSpace toy_space() { return SearchSpace({{"tile.out.0", {1, 2, 4, 8, 16, 32}}, {"unroll", {1, 2, 4, 8, 16, 32, 64, 1 << 20}}}); }

Record toy_record(const Kernel& k, std::int64_t tile, std::int64_t unroll, double seconds) {
  Record r;
  r.device = "cpu:test";
  r.kernel_key = k.key();
  r.kernel_name = k.name();
  r.knob_names = {"tile.out.0", "unroll"};
  r.config = Config{{tile, unroll}};
  r.result = MeasureResult::from_repeats({seconds, seconds * 1.1, seconds * 0.9}, 0.5);
  r.unix_time = 1.7e9;
  return r;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void write_lines(const std::string& path, const std::vector<std::string>& lines, bool final_newline = true) {
  std::ofstream out(path, std::ios::trunc);
  for (std::size_t i = 0; i < lines.size(); ++i) out << lines[i] << (i + 1 < lines.size() || final_newline ? "\n" : "");
}

// A log with a definition and three records; returns its path.
std::string three_records(const std::string& name) {
  const std::string path = scratch_dir(name) + "/log.jsonl";
  const Kernel k = toy_kernel();
  RecordLog log(path);
  log.define_kernel(k, toy_space());
  log.append(toy_record(k, 1, 1, 3e-3));
  log.append(toy_record(k, 2, 1, 2e-3));
  Record failed = toy_record(k, 4, 1, 1e-3);
  failed.result = MeasureResult::failure(MeasureStatus::kCompileError, "too many registers", 0.2);
  log.append(failed);
  return path;
}


// An experiment's output (runs/<space>/<strategy>/seed_<n>/records.jsonl): two runs of the toy
// tile space and one of a fusion space over the same kernel key, as a program's fusion and
// whole-program spaces share one, the experiment's memo (records without definitions) and
// Adams2019's samples.jsonl beside them.
std::string experiment_folder(const std::string& name) {
  const std::string root = scratch_dir(name);
  const Kernel k = toy_kernel();
  const auto log_at = [&](const std::string& run) {
    std::filesystem::create_directories(root + "/runs/" + run);
    return root + "/runs/" + run + "/records.jsonl";
  };
  {
    RecordLog log(log_at("toy/tile/random/seed_1"));
    log.define_kernel(k, toy_space());
    log.append(toy_record(k, 1, 1, 4e-3));
    Record failed = toy_record(k, 2, 1, 1e-3);
    failed.result = MeasureResult::failure(MeasureStatus::kTimeout, "took too long", 1.0);
    log.append(failed);
    Record measured = toy_record(k, 1, 1, 5e-3);
    measured.knob_names.clear();
    measured.config = Config{};
    log.append(ReferenceRecord{measured, "Adams2019", ""});
  }
  {
    RecordLog log(log_at("toy/tile/random/seed_2"));
    log.define_kernel(k, toy_space());
    log.append(toy_record(k, 1, 1, 9e-3));  // measured before: the first figure stays
    log.append(toy_record(k, 2, 1, 3e-3));  // failed before: the success replaces it
    log.append(toy_record(k, 4, 2, 2e-3));
  }
  {
    RecordLog log(log_at("toy/fusion/random/seed_1"));
    log.define_kernel(k, SearchSpace({{"fuse.1", {0, 1}}}));
    for (std::int64_t fuse : {0, 1}) {
      Record r = toy_record(k, 1, 1, 6e-3);
      r.knob_names = {"fuse.1"};
      r.config = Config{{fuse}};
      log.append(r);
    }
  }
  {
    RecordLog memo(root + "/measured_once.jsonl");  // records alone, read first
    memo.append(toy_record(k, 8, 1, 7e-3));
  }
  std::ofstream(root + "/runs/toy/tile/random/seed_1/samples.jsonl") << "{\"sample\":0,\"seconds\":1e-3}\n";
  return root;
}

}  // namespace

TEST_CASE("record log round trip: definitions, records, failures and a corpus") {
  const std::string path = three_records("log_roundtrip");
  const LoadedLog loaded = RecordLog::load(path);
  REQUIRE(loaded.warnings.empty());
  REQUIRE(loaded.records.size() == 3);
  const Kernel k = toy_kernel();
  REQUIRE(loaded.kernels.at(k.key()).kernel.name() == "toy");
  REQUIRE(loaded.kernels.at(k.key()).space->dimension() == 2);
  const Record& first = loaded.records[0];
  const Record expected = toy_record(k, 1, 1, 3e-3);
  REQUIRE(first.config == expected.config);
  REQUIRE(first.result.seconds == expected.result.seconds);
  REQUIRE(first.result.repeats == expected.result.repeats);
  REQUIRE(first.result.cost_seconds == 0.5);
  REQUIRE(loaded.records[2].result.status == MeasureStatus::kCompileError);
  REQUIRE(loaded.records[2].result.message == "too many registers");
  const Corpus corpus = load_source(path);
  REQUIRE(corpus.format == "record-log");
  REQUIRE(corpus.measurement_count() == 3);
  REQUIRE(corpus.failed_count() == 1);
  REQUIRE(corpus.kernels.at(0).kernel.key() == k.key());
}

TEST_CASE("reference lines: another scheduler's runtime per kernel, the latest per name, only successes in the corpus") {
  const std::string path = three_records("log_references");
  const Kernel k = toy_kernel();
  {
    RecordLog log(path);
    const auto reference = [&](const std::string& name, double seconds) {
      Record measured = toy_record(k, 1, 1, seconds);
      measured.knob_names.clear();
      measured.config = Config{};
      return ReferenceRecord{measured, name, "machine 2,16777216,40"};
    };
    log.append(reference("Adams2019", 5e-3));
    log.append(reference("Adams2019", 4e-3));  // measured again: replaces
    log.append(reference("Mullapudi2016", 9e-3));
    ReferenceRecord failed = reference("Li2018", 1e-3);
    failed.measured.result = MeasureResult::failure(MeasureStatus::kTimeout, "autoscheduler took over 60 s", 60);
    log.append(failed);
  }
  const LoadedLog loaded = RecordLog::load(path);
  REQUIRE(loaded.records.size() == 3);
  REQUIRE(loaded.references.size() == 3);
  CHECK(loaded.references[1].name == "Mullapudi2016");
  CHECK(loaded.references[0].name == "Adams2019");  // the later one, in the earlier one's stead
  CHECK(loaded.references[0].measured.result.seconds == 4e-3);
  CHECK(loaded.references[0].settings == "machine 2,16777216,40");
  const Corpus corpus = load_source(path);
  REQUIRE(corpus.kernels.size() == 1);
  const auto& references = corpus.kernels.front().references;
  REQUIRE(references.size() == 2);
  CHECK(references.at("Adams2019") == 4e-3);
  CHECK(references.at("Mullapudi2016") == 9e-3);
  // A reference line with a bad runtime is an error naming its line, as a record's is.
  auto lines = lines_of(path);
  lines.push_back(R"({"v":1,"type":"reference","device":"cpu:test","kernel":")" + k.key() +
                  R"(","name":"toy","status":"ok","seconds":-1,"reference":"Adams2019"})");
  write_lines(path, lines);
  REQUIRE_THROWS_WITH(RecordLog::load(path), Catch::Contains("line " + std::to_string(lines.size())));
}

TEST_CASE("a gzipped record log (a committed corpus) loads as the log itself") {
  const std::string path = three_records("log_gzip");
  REQUIRE(std::system(("gzip -k -f '" + path + "'").c_str()) == 0);
  const Corpus plain = load_source(path), zipped = load_source(path + ".gz");
  REQUIRE(zipped.measurement_count() == 3);
  REQUIRE(zipped.failed_count() == plain.failed_count());
  REQUIRE(zipped.kernels.at(0).kernel.key() == plain.kernels.at(0).kernel.key());
}

TEST_CASE("a torn last line is dropped with a warning; reopening cuts it and continues cleanly") {
  const std::string path = three_records("log_torn");
  auto lines = lines_of(path);
  lines.back() = lines.back().substr(0, lines.back().size() / 2);
  write_lines(path, lines, false);
  const LoadedLog loaded = RecordLog::load(path);
  REQUIRE(loaded.records.size() == 2);
  REQUIRE(loaded.warnings.size() == 1);
  REQUIRE_THAT(loaded.warnings[0], Catch::Contains("line 4") && Catch::Contains("torn"));
  {
    RecordLog reopened(path);
    reopened.append(toy_record(toy_kernel(), 8, 1, 1e-3));
  }
  const LoadedLog again = RecordLog::load(path);
  REQUIRE(again.warnings.empty());
  REQUIRE(again.records.size() == 3);
  REQUIRE(again.records.back().config.values[0] == 8);
}

TEST_CASE("a corrupt line that is not the last is an error naming its line") {
  const std::string path = three_records("log_corrupt");
  auto lines = lines_of(path);
  lines[2] = lines[2].substr(0, 20);
  write_lines(path, lines);
  REQUIRE_THROWS_WITH(RecordLog::load(path), Catch::Contains("log.jsonl: line 3") && Catch::Contains("corrupt"));
}

TEST_CASE("NaN and negative runtimes in a record log are errors naming the line") {
  const std::string path = three_records("log_bad_times");
  const auto original = lines_of(path);
  struct Row { std::string from, to, expected; };
  const auto row = GENERATE(Row{"\"seconds\":0.003", "\"seconds\":null", "NaN"}, Row{"\"seconds\":0.003", "\"seconds\":-0.003", "negative"},
                            Row{"\"repeats\":[0.003", "\"repeats\":[-1", "negative"}, Row{"\"cost\":0.5", "\"cost\":-0.5", "negative"},
                            // A resumed campaign adopted a logged 0 as its best; a cost of 1e300 broke its budget.
                            Row{"\"seconds\":0.003", "\"seconds\":0", "0 s"}, Row{"\"cost\":0.5", "\"cost\":1e300", "more than a week"},
                            // A config outside its kernel's space, or missing a knob.
                            Row{"\"unroll\":1}", "\"unroll\":3}", "knob 'unroll'"}, Row{",\"unroll\":1}", "}", "'unroll' is missing"},
                            Row{"\"unroll\":1}", "\"unroll\":1,\"vector\":4}", "'vector' is not one"},
                            // nlohmann would keep the last of two keys silently.
                            Row{"\"seconds\":0.003", "\"seconds\":0.003,\"seconds\":1", "appears twice"});
  CAPTURE(row.to);
  auto lines = original;
  const auto at = lines[1].find(row.from);
  REQUIRE(at != std::string::npos);
  lines[1].replace(at, row.from.size(), row.to);
  write_lines(path, lines);
  REQUIRE_THROWS_WITH(RecordLog::load(path), Catch::Contains("line 2") && Catch::Contains(row.expected));
}

TEST_CASE("duplicate records are merged; a later success replaces an earlier failure") {
  const std::string path = scratch_dir("log_duplicates") + "/log.jsonl";
  const Kernel k = toy_kernel();
  {
    RecordLog log(path);
    log.append(toy_record(k, 1, 1, 3e-3));
    log.append(toy_record(k, 1, 1, 5e-3));  // measured twice: the first stays
    Record failed = toy_record(k, 2, 1, 0);
    failed.result = MeasureResult::failure(MeasureStatus::kTimeout, "timed out", 1.0);
    log.append(failed);
    log.append(toy_record(k, 2, 1, 2e-3));  // the retry succeeded
  }
  const LoadedLog loaded = RecordLog::load(path);
  REQUIRE(loaded.records.size() == 2);
  REQUIRE(loaded.duplicates_merged == 2);
  REQUIRE(loaded.records[0].result.seconds == 3e-3);
  REQUIRE(loaded.records[1].result.ok());
  REQUIRE(loaded.records[1].result.seconds == 2e-3);
}

TEST_CASE("a log written by a child killed with SIGKILL mid-stream reloads with every flushed record") {
  const std::string path = scratch_dir("log_sigkill") + "/log.jsonl";
  const Kernel k = toy_kernel();
  int progress[2];
  REQUIRE(pipe(progress) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Child: append records forever, reporting each index after append() has returned.
    close(progress[0]);
    // No kernel definition: the unroll values count up past any space, and a defined kernel's
    // records must lie inside its space.
    RecordLog log(path);
    for (std::int64_t i = 0;; ++i) {
      log.append(toy_record(k, 1, 1 + i, 1e-3));
      if (write(progress[1], &i, sizeof i) != sizeof i) _exit(1);
    }
  }
  close(progress[1]);
  std::int64_t last = -1, index = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < deadline && read(progress[0], &index, sizeof index) == sizeof index) last = index;
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  // Drain what the child reported before it died.
  while (read(progress[0], &index, sizeof index) == sizeof index) last = index;
  close(progress[0]);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(last > 10);

  const LoadedLog loaded = RecordLog::load(path);
  CAPTURE(last, loaded.records.size());
  // Every record the child finished appending is there, in order; at most one more (written
  // but not yet reported) may follow.
  REQUIRE(loaded.records.size() >= static_cast<std::size_t>(last + 1));
  REQUIRE(loaded.records.size() <= static_cast<std::size_t>(last + 2));
  for (std::size_t i = 0; i < loaded.records.size(); ++i) REQUIRE(loaded.records[i].config.values[1] == static_cast<std::int64_t>(1 + i));
  REQUIRE(loaded.duplicates_merged == 0);

  // Reopening for append continues after the last complete line.
  {
    RecordLog reopened(path);
    reopened.define_kernel(k, toy_space());  // already defined: not written again
    reopened.append(toy_record(k, 2, 1, 1e-3));
  }
  const LoadedLog again = RecordLog::load(path);
  REQUIRE(again.warnings.empty());
  REQUIRE(again.records.size() == loaded.records.size() + 1);
  REQUIRE(again.kernels.size() == 1);
  std::size_t definitions = 0;
  for (const auto& line : lines_of(path)) definitions += line.find("\"type\":\"kernel\"") != std::string::npos ? 1 : 0;
  REQUIRE(definitions == 1);
}

TEST_CASE("record log keeps the knob order it was written in, not JSON's sorted order") {
  const std::string path = scratch_dir("log_knob_order") + "/log.jsonl";
  const Kernel k = toy_kernel();
  const SearchSpace space({{"NWG", {16, 32, 64}}, {"MWG", {16, 32, 64}}});
  {
    RecordLog log(path);
    log.define_kernel(k, space);
    Record r = toy_record(k, 1, 1, 1e-3);
    r.knob_names = {"NWG", "MWG"};
    r.config = Config{{64, 16}};
    log.append(r);
  }
  const LoadedLog loaded = RecordLog::load(path);
  REQUIRE(loaded.records.at(0).knob_names == std::vector<std::string>{"NWG", "MWG"});
  REQUIRE(loaded.records.at(0).config == Config{{64, 16}});
  const Corpus corpus = corpus_from_log(loaded, path);
  REQUIRE(corpus.kernels.at(0).space->contains(corpus.kernels.at(0).measurements.at(0).config));
}

TEST_CASE("inspect's source loader passes the log's warnings on: a torn last line, merged duplicates") {
  const std::string path = three_records("log_warnings");
  auto lines = lines_of(path);
  lines.push_back(lines[1]);                              // a duplicate record
  lines.push_back(lines[2].substr(0, lines[2].size() / 2));  // a torn last line
  write_lines(path, lines, false);
  const Corpus corpus = load_source(path);
  REQUIRE(corpus.notes.size() == 2);
  CHECK(corpus.notes[0].find("torn last line") != std::string::npos);
  CHECK(corpus.notes[1].find("merged 1 duplicate") != std::string::npos);
}

TEST_CASE("a folder of record logs: one kernel per space, every run's configs merged once") {
  const Corpus corpus = load_source(experiment_folder("record_folder"));
  REQUIRE(corpus.kernels.size() == 2);  // the tile and the fusion space of one kernel key stay apart
  const auto tile = std::find_if(corpus.kernels.begin(), corpus.kernels.end(),
                                 [](const MeasuredKernel& k) { return k.space->dimension() == 2; });
  REQUIRE(tile != corpus.kernels.end());
  std::map<Config, double> seconds;
  for (const Measurement& m : tile->measurements) {
    REQUIRE(m.result.ok());
    seconds[m.config] = m.result.seconds;
  }
  REQUIRE(seconds.size() == 4);
  CHECK(seconds.at(Config{{8, 1}}) == Approx(7e-3));
  CHECK_FALSE(tile->kernel.body().empty());  // the body and space of the logs that define it
  CHECK_FALSE(tile->space->is_recorded());
  CHECK(seconds.at(Config{{1, 1}}) == Approx(4e-3));
  CHECK(seconds.at(Config{{2, 1}}) == Approx(3e-3));
  CHECK(seconds.at(Config{{4, 2}}) == Approx(2e-3));
  CHECK(tile->references.at("Adams2019") == Approx(5e-3));
  const auto fusion = tile == corpus.kernels.begin() ? corpus.kernels.begin() + 1 : corpus.kernels.begin();
  CHECK(fusion->measurements.size() == 2);
  // Adams2019's samples.jsonl is not a record log: skipped and named.
  CHECK(std::count_if(corpus.notes.begin(), corpus.notes.end(),
                      [](const std::string& note) { return note.find("samples.jsonl") != std::string::npos; }) == 1);
}

TEST_CASE("a folder without record logs, or with a corrupt one, is an error naming it") {
  const std::string empty = scratch_dir("record_folder_empty");
  REQUIRE_THROWS_WITH(load_source(empty), Catch::Contains(empty) && Catch::Contains("record logs"));

  const std::string root = experiment_folder("record_folder_corrupt");
  const std::string corrupt = root + "/runs/toy/fusion/random/seed_1/records.jsonl";
  std::ofstream(corrupt, std::ios::app) << "{\"v\":1,\"type\":\"record\",\n{}\n";
  REQUIRE_THROWS_WITH(load_source(root), Catch::Contains(corrupt) && Catch::Contains("line 4"));
}

TEST_CASE("a log without definitions keeps two spaces of one kernel key apart (an experiment's memo)") {
  const std::string path = scratch_dir("log_two_spaces") + "/memo.jsonl";
  const Kernel k = toy_kernel();
  {
    RecordLog log(path);
    log.append(toy_record(k, 1, 1, 3e-3));
    Record fusion = toy_record(k, 1, 1, 2e-3);
    fusion.knob_names = {"fuse.1"};
    fusion.config = Config{{1}};
    log.append(fusion);
    log.append(toy_record(k, 2, 1, 4e-3));
  }
  const Corpus corpus = load_source(path);
  REQUIRE(corpus.kernels.size() == 2);
  CHECK(corpus.kernels[0].space->knob_names() == std::vector<std::string>{"tile.out.0", "unroll"});
  CHECK(corpus.kernels[0].measurements.size() == 2);
  CHECK(corpus.kernels[1].space->knob_names() == std::vector<std::string>{"fuse.1"});
  CHECK(corpus.kernels[1].measurements.size() == 1);
}
