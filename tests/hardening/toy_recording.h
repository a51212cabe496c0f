#pragma once
// Shared by the hardening tests: a recorded toy kernel (every config of a constrained tile space,
// distinct runtimes, a few recorded compile errors) as a corpus and as a record-log file that
// `perftune tune` can replay, plus a campaign file around it and a way to run `perftune` as a
// child process (optionally limited, or SIGKILLed after a delay).
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/record_log.h"
#include "search/toy_cost_model.h"

namespace perftune::testing {

inline const Config kToyTarget{{32, 4, 16}};
inline constexpr const char* kToyDevice = "TOY_GPU";

inline Corpus toy_recording() {
  const SearchSpace full = tile_space(8, [](const Config& c) { return c.values[0] * c.values[1] <= 2048; });
  const auto configs = full.enumerate();
  MeasuredKernel measured;
  measured.kernel = toy_kernel();
  measured.space = std::make_shared<SearchSpace>(SearchSpace::recorded(full.knobs(), configs));
  measured.device = kToyDevice;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    // A deterministic jitter below 1% keeps runtimes distinct (one true best).
    const double jitter = 1.0 + 0.01 * static_cast<double>((i * 2654435761u) % 97) / 97.0;
    MeasureResult result = i % 23 == 5 ? MeasureResult::failure(MeasureStatus::kCompileError, "recorded failure", 0.5)
                                       : MeasureResult::from_repeats({toy_seconds(configs[i], kToyTarget) * jitter}, 0.25);
    measured.measurements.push_back(Measurement{configs[i], result});
  }
  Corpus corpus;
  corpus.path = "toy_recording";
  corpus.kernels.push_back(std::move(measured));
  return corpus;
}

// The recording as a record log (a source `perftune tune` replays).
inline void write_recording(const Corpus& corpus, const std::string& path) {
  std::filesystem::remove(path);
  RecordLog log(path);
  const MeasuredKernel& measured = corpus.kernels.front();
  for (const Measurement& m : measured.measurements)
    log.append(Record{measured.device, measured.kernel.key(), measured.kernel.name(), measured.space->knob_names(), m.config,
                      m.result, 1.0});
}

// The recorded runtime of each ok config.
inline std::map<Config, double> recorded_seconds(const Corpus& corpus) {
  std::map<Config, double> seconds;
  for (const Measurement& m : corpus.kernels.front().measurements)
    if (m.result.ok()) seconds[m.config] = m.result.seconds;
  return seconds;
}

inline std::string write_campaign(const std::string& path, const nlohmann::json& campaign) {
  std::ofstream(path) << campaign.dump(2) << "\n";
  return path;
}

// The perftune binary the tests run (ctest sets PERFTUNE_BIN; else the build tree's).
inline std::string perftune_binary() {
  const char* bin = std::getenv("PERFTUNE_BIN");
  return bin ? bin : std::string(PERFTUNE_BINARY_DIR) + "/perftune";
}

struct ChildRun {
  bool exited = false;  // else killed by a signal
  int exit_code = -1;
  int signal = 0;
  double wall_seconds = 0.0;
  std::string stderr_text;
};

// Runs `perftune ARGS...` as a child; `in_child` runs after fork (e.g. setrlimit), and the child
// is SIGKILLed after `kill_after` seconds when given. stdout is discarded; stderr comes back
// through a pipe (a file would fall under the child's own file-size limit).
inline ChildRun run_perftune(const std::vector<std::string>& args, const std::function<void()>& in_child = {},
                             std::optional<double> kill_after = {}) {
  const auto start = std::chrono::steady_clock::now();
  // Everything the child needs is allocated before fork(): a child of a threaded process may
  // only call async-signal-safe functions until exec (malloc could deadlock).
  std::vector<std::string> argv_strings{perftune_binary()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    dup2(pipe_fds[1], 2);  // dup2 clears close-on-exec on the copy
    if (null >= 0) dup2(null, 1);
    if (in_child) in_child();
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  ChildRun run;
  std::thread reader([&run, fd = pipe_fds[0]] {
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      run.stderr_text.append(buffer, static_cast<std::size_t>(n));
    }
  });
  // A run not meant to be killed still gets a watchdog, so a hung child fails the test, not ctest.
  constexpr double kWatchdogSeconds = 300;
  const double deadline = kill_after.value_or(kWatchdogSeconds);
  int status = 0;
  if (pid > 0) {
    bool reaped = false;
    while (!reaped && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < deadline) {
      reaped = waitpid(pid, &status, WNOHANG) == pid;
      if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!reaped) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
  reader.join();
  close(pipe_fds[0]);
  run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.exited = pid > 0 && WIFEXITED(status);
  run.exit_code = run.exited ? WEXITSTATUS(status) : -1;
  run.signal = pid > 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return run;
}

// The stderr lines that are not progress ("[tune] ..."): the error a failed run explains itself with.
inline std::vector<std::string> error_lines(const ChildRun& run) {
  std::vector<std::string> lines;
  std::istringstream in(run.stderr_text);
  for (std::string line; std::getline(in, line);)
    if (!line.starts_with("[tune]")) lines.push_back(line);
  return lines;
}

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Raw record lines of a log, counted per config (not merged, unlike RecordLog::load).
inline std::map<std::string, int> record_lines_per_config(const std::string& path) {
  std::map<std::string, int> count;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("type", "") == "record") ++count[j.at("config").dump()];
  }
  return count;
}

}  // namespace perftune::testing
