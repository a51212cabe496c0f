// Measurement processes die with perftune: `perftune tune` on the command backend, whose runner
// hangs in a shell with a background `sleep`, is SIGKILLed once the runner is up, 20 times in a
// row on one output folder; every kill must leave no runner, no sleep, and no lock that blocks
// the next run (hardware/process/subprocess.h's watchdog and parent-death signal; ir/output_lock.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "test_support.h"
#include "toy_recording.h"

namespace perftune {
namespace {

constexpr int kKills = 20;
// A sleep length no other process uses: it is how the test finds the runner's processes.
const std::string kMarker = "59.7131";

pid_t start_perftune(const std::vector<std::string>& args) {
  std::vector<std::string> strings{testing::perftune_binary()};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // perftune dies with this test however the test ends (a failed REQUIRE, a ctest timeout), so
    // one failure cannot leave a runner behind that fails the next run's opening check.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

bool wait_for(const std::function<bool()>& condition, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

TEST_CASE("20 SIGKILLs of a live campaign leave 0 measurement processes behind", "[kill][orphans]") {
  const std::string dir = scratch_dir("orphans");
  const std::string campaign = testing::write_campaign(
      dir + "/campaign.json",
      {{"source", {{"program", source_path("configs/programs/mlp_block_tiny.json")}, {"kernel", "fusion"}}},
       {"backend", {{"type", "command"}, {"commands", {"sleep " + kMarker + " & sleep " + kMarker}}, {"timeout_seconds", 120}}},
       {"model", {{"type", "none"}}},
       {"strategy", {{"type", "random"}}},
       {"budget", {{"measurements", 8}}},
       {"output", dir + "/out"}});
  REQUIRE(count_processes_with(kMarker) == 0);
  int orphans = 0, runners_seen = 0;
  double slowest_start = 0;
  for (int kill = 0; kill < kKills; ++kill) {
    const auto started = std::chrono::steady_clock::now();
    const pid_t perftune = start_perftune({"tune", campaign});
    REQUIRE(perftune > 0);
    // Killed only once its runner (its shell and sleeps) is up, so there is something to leak.
    const bool runner_up = wait_for([] { return count_processes_with(kMarker) >= 2; }, 120);
    slowest_start = std::max(slowest_start, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    runners_seen += runner_up;
    ::kill(perftune, SIGKILL);
    int status = 0;
    ::waitpid(perftune, &status, 0);
    CAPTURE(kill, status);
    REQUIRE(runner_up);  // else the run ended early: the lock of the previous kill blocked it, say
    wait_for([] { return count_processes_with(kMarker) == 0; }, 5);
    orphans += count_processes_with(kMarker);
  }
  WARN("orphan test: " << kKills << " SIGKILLs, runners up at each kill: " << runners_seen << " (slowest after "
                        << slowest_start << " s), processes left behind: " << orphans);
  CHECK(runners_seen == kKills);
  CHECK(orphans == 0);
}

}  // namespace
}  // namespace perftune
