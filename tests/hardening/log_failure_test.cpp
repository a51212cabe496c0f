// A record log that cannot be written (a full disk, a read-only folder) stops `perftune tune`
// with a one-line error naming the log, and every record written before stays intact: the
// campaign resumes from it, once writable again, to the same end as an uninterrupted run.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "hardening/toy_recording.h"
#include "test_support.h"

namespace perftune {
namespace {

constexpr uid_t kNobody = 65534;  // Debian's "nobody": an unprivileged user to drop to when root

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t line_count(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

struct Setup {
  std::string dir, campaign, output, records;
  nlohmann::json reference;
};

Setup setup(const std::string& name) {
  Setup s;
  s.dir = scratch_dir(name);
  testing::write_recording(testing::toy_recording(), s.dir + "/source.jsonl");
  s.output = s.dir + "/run";
  s.records = s.output + "/records.jsonl";
  s.campaign = testing::write_campaign(
      s.dir + "/campaign.json",
      {{"source", {{"path", "source.jsonl"}}},
       {"backend", {{"type", "replay"}, {"faults", {{"share", 0.2}, {"seed", 4}, {"hang_seconds", 0.0}}}}},
       {"strategy", {{"type", "measured_annealing"}}},
       {"budget", {{"measurements", 40}}},
       {"top_k", 4},
       {"seed", 9},
       {"confirm_best", true},
       {"output", "run"}});
  const auto reference = testing::run_perftune({"tune", s.campaign, "--output", s.dir + "/reference"});
  REQUIRE(reference.exited);
  REQUIRE(reference.exit_code == 0);
  s.reference = testing::read_json(s.dir + "/reference/summary.json");
  return s;
}

void require_same_end(const Setup& s) {
  const nlohmann::json summary = testing::read_json(s.output + "/summary.json");
  CHECK(summary.at("best_config") == s.reference.at("best_config"));
  CHECK(summary.at("best_after") == s.reference.at("best_after"));
  CHECK(summary.at("measurements") == s.reference.at("measurements"));
  CHECK(testing::record_lines_per_config(s.records) == testing::record_lines_per_config(s.dir + "/reference/records.jsonl"));
}

TEST_CASE("a full disk stops the campaign with a clear error and loses nothing recorded") {
  const Setup s = setup("hardening_disk_full");
  const std::string reference_log = file_text(s.dir + "/reference/records.jsonl");
  const std::size_t limit_lines = GENERATE(0u, 7u, 25u);
  CAPTURE(limit_lines);
  std::filesystem::remove_all(s.output);
  // A file-size limit ends the log partway through the line after `limit_lines` lines; with
  // SIGXFSZ ignored, write() fails with EFBIG as on a full disk.
  std::size_t limit = 0;
  for (std::size_t i = 0, lines = 0; i < reference_log.size() && lines < limit_lines; ++i)
    if (reference_log[i] == '\n') limit = i + 1, ++lines;
  // Half the next line: whole lines of this run may differ from the reference's by a few bytes ("time").
  limit += (reference_log.find('\n', limit) - limit) / 2;
  const auto run = testing::run_perftune({"tune", s.campaign}, [limit] {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit size{static_cast<rlim_t>(limit), static_cast<rlim_t>(limit)};
    setrlimit(RLIMIT_FSIZE, &size);
  });
  CAPTURE(run.stderr_text);
  CHECK(run.exited);
  CHECK(run.exit_code != 0);
  const auto errors = testing::error_lines(run);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::StartsWith("perftune tune: error: ") && Catch::Contains("records.jsonl") && Catch::Contains("File too large") &&
                                  Catch::Contains("every record written before is intact"));
  // What was written is whole lines only, and exactly the reference's first lines.
  const std::string written = file_text(s.records);
  CHECK(written.size() <= limit);
  CHECK((written.empty() || written.back() == '\n'));
  // Lines differ only in their "time": compare the records without it.
  auto without_time = [](const std::string& text) {
    std::vector<nlohmann::json> records;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      j.erase("time");
      records.push_back(std::move(j));
    }
    return records;
  };
  const auto kept = without_time(written);
  const auto reference_records = without_time(reference_log);
  REQUIRE(kept.size() <= reference_records.size());
  CHECK(std::equal(kept.begin(), kept.end(), reference_records.begin()));
  CHECK(line_count(written) == limit_lines);

  // With room again, the same command resumes to the uninterrupted end.
  const auto resumed = testing::run_perftune({"tune", s.campaign});
  CAPTURE(resumed.stderr_text);
  REQUIRE(resumed.exit_code == 0);
  require_same_end(s);
  const nlohmann::json summary = testing::read_json(s.output + "/summary.json");
  CHECK(summary.at("from_log") == limit_lines);
}

TEST_CASE("an unwritable log stops the campaign with a clear error and leaves the log untouched") {
  const Setup s = setup("hardening_read_only");
  // A run cut short after 10 records, then its folder and log made read-only.
  std::filesystem::create_directories(s.output);
  {
    std::ifstream in(s.dir + "/reference/records.jsonl");
    std::ofstream out(s.records);
    std::string line;
    for (int i = 0; i < 10 && std::getline(in, line); ++i) out << line << "\n";
  }
  const std::string before = file_text(s.records);
  chmod(s.records.c_str(), 0444);
  chmod(s.output.c_str(), 0555);
  const bool root = geteuid() == 0;
  const auto run = testing::run_perftune({"tune", s.campaign}, [root] {
    // Root writes through permissions: drop to an unprivileged user, as a real user would be.
    if (root && (setgid(kNobody) != 0 || setuid(kNobody) != 0)) _exit(125);
  });
  chmod(s.output.c_str(), 0755);
  chmod(s.records.c_str(), 0644);
  REQUIRE(run.exit_code != 125);  // could not drop privileges
  CAPTURE(run.stderr_text);
  CHECK(run.exited);
  CHECK(run.exit_code != 0);
  const auto errors = testing::error_lines(run);
  REQUIRE(errors.size() == 1);
  CHECK_THAT(errors[0], Catch::StartsWith("perftune tune: error: ") && Catch::Contains(s.records) && Catch::Contains("ermission denied"));
  CHECK(file_text(s.records) == before);

  const auto resumed = testing::run_perftune({"tune", s.campaign});
  CAPTURE(resumed.stderr_text);
  REQUIRE(resumed.exit_code == 0);
  require_same_end(s);
}

}  // namespace
}  // namespace perftune
