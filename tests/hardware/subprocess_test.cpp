// run_subprocess and ChildProcess against hostile children: a stdout flood, a stderr flood, a
// background process holding stdout after the answer, a hang, and a parent killed mid-run.
#include "hardware/process/subprocess.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "hardware_test_support.h"

namespace perftune {

namespace {

double peak_rss_mb() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

TEST_CASE("a child flooding stdout is cut at the limit at once, its memory bounded", "[hardware][subprocess]") {
  const double rss_before = peak_rss_mb();
  const SubprocessResult r = run_subprocess({"yes"}, "", 2.0, 1 << 20);
  CHECK(r.stdout_overflow);
  CHECK_FALSE(r.ok());
  CHECK(r.out.size() == (1u << 20));
  CHECK(r.wall_seconds < 1.0);  // not the timeout: the limit ends it
  CHECK(r.describe().find("more than 1048576 bytes on stdout") != std::string::npos);
  CHECK(peak_rss_mb() - rss_before < 100);
}

TEST_CASE("a child flooding stderr keeps only the tail and its timeout within 10%", "[hardware][subprocess]") {
  const SubprocessResult r = run_subprocess({"sh", "-c", "yes 1>&2"}, "", 1.0);
  CHECK(r.timed_out);
  CHECK(r.err.size() <= 64 * 1024);
  CHECK(r.wall_seconds < 1.1);
}

TEST_CASE("a hanging child is killed at its timeout, within 10%", "[hardware][subprocess]") {
  const SubprocessResult r = run_subprocess({"sh", "-c", "sleep 30"}, "", 0.5);
  CHECK(r.timed_out);
  CHECK(r.wall_seconds < 0.55);
}

TEST_CASE("a child that answers and leaves a background process holding stdout keeps its answer", "[hardware][subprocess]") {
  const std::string marker = "31.0717";
  const SubprocessResult r = run_subprocess({"sh", "-c", "echo answer; sleep " + marker + " & exit 0"}, "", 5.0);
  CAPTURE(r.describe(), r.err);
  CHECK(r.ok());
  CHECK(r.out == "answer\n");
  CHECK(r.wall_seconds < 1.0);
  // The background process was killed with the child's group, not left running.
  for (int i = 0; i < 100 && count_processes_with(marker) > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(count_processes_with(marker) == 0);
}

TEST_CASE("a timeout is always finite and above 0", "[hardware][subprocess]") {
  CHECK_THROWS_AS(run_subprocess({"true"}, "", 0.0), std::invalid_argument);
  CHECK_THROWS_AS(run_subprocess({"true"}, "", -1.0), std::invalid_argument);
  CHECK_THROWS_AS(run_subprocess({"true"}, "", INFINITY), std::invalid_argument);
  CHECK(timeout_problem(0.0).has_value());
  CHECK_FALSE(timeout_problem(0.5).has_value());
}

TEST_CASE("a program that does not exist cannot be started", "[hardware][subprocess]") {
  CHECK_THROWS_WITH(run_subprocess({"perftune-no-such-program"}, "", 1.0), Catch::Contains("cannot start"));
}

TEST_CASE("children and what they started die with a SIGKILLed parent", "[hardware][subprocess]") {
  const std::string marker = "47.3191";
  // The parent that will be killed: a fork of this test running a child that starts a grandchild.
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    run_subprocess({"sh", "-c", "sleep " + marker + " & sleep " + marker}, "", 60.0);
    ::_exit(0);
  }
  // The shell and its two sleeps (a shell that execs its last command leaves two).
  for (int i = 0; i < 500 && count_processes_with(marker) < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(count_processes_with(marker) >= 2);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  for (int i = 0; i < 300 && count_processes_with(marker) > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(count_processes_with(marker) == 0);
}

}  // namespace
}  // namespace perftune
