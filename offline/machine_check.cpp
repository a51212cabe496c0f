#include "offline/machine_check.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <thread>
#include <utility>

#include "ir/input_error.h"
#include "ir/measurement.h"
#include "offline/calibrate.h"

namespace perftune {
nlohmann::ordered_json MachineCheck::to_json() const {
  return {{"phase", phase},
          {"unix_time", unix_seconds},
          {"threads", threads},
          {"fma_flops_one_core", fma_flops_one_core},
          {"fma_flops_threads", fma_flops_threads},
          {"triad_bandwidth_threads", triad_bandwidth_threads}};
}

MachineCheck check_machine(const std::string& phase, unsigned threads, double seconds) {
  MachineCheck check;
  check.phase = phase;
  check.unix_seconds = unix_now();
  check.threads = threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  check.fma_flops_one_core = measure_fma_flops(1, seconds);
  check.fma_flops_threads = measure_fma_flops(check.threads, seconds);
  check.triad_bandwidth_threads = measure_triad_bandwidth(check.threads, dram_triad_bytes(read_cache_sizes()), seconds);
  return check;
}

void append_machine_check(const std::string& file, const MachineCheck& check) {
  std::ofstream out(file, std::ios::app);
  out << check.to_json().dump() << "\n" << std::flush;
  if (!out) throw std::runtime_error(file + ": cannot append a machine check");
}

nlohmann::ordered_json read_machine_checks(const std::string& file) {
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  std::ifstream in(file);
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    nlohmann::ordered_json entry = nlohmann::ordered_json::parse(line, nullptr, false);
    const bool torn = in.eof();  // a last line without its newline: a kill while it was written
    if (torn && !entry.is_object()) break;
    if (!entry.is_object() || !entry.contains("fma_flops_one_core"))
      throw InputError(file, "line " + std::to_string(number), "a machine check (a JSON object with fma_flops_one_core)");
    checks.push_back(std::move(entry));
  }
  return checks;
}

std::function<void()> machine_check_hook(std::string phase, int threads, std::string file, std::ostream* log) {
  const auto backend_threads = static_cast<unsigned>(std::max(0, threads));  // 0: the machine's cores
  return [phase = std::move(phase), backend_threads, file = std::move(file), log, checked = std::make_shared<bool>(false)] {
    if (std::exchange(*checked, true)) return;
    const MachineCheck check = check_machine(phase, backend_threads);
    append_machine_check(file, check);
    if (log) *log << "machine check before the " << phase << ": " << describe(check) << std::endl;
  };
}

std::optional<std::string> machines_differ(const nlohmann::ordered_json& checks, double tolerance) {
  for (const char* rate : {"fma_flops_one_core", "fma_flops_threads"}) {
    double slowest = 0, fastest = 0;
    for (const auto& check : checks) {
      const double value = check.at(rate).get<double>();
      slowest = slowest == 0 ? value : std::min(slowest, value);
      fastest = std::max(fastest, value);
    }
    if (slowest > 0 && fastest > (1 + tolerance) * slowest) {
      char text[200];
      std::snprintf(text, sizeof text, "the sittings ran on different machines (%s from %.0f to %.0f GFLOP/s): figures from different sittings do not compare",
                    rate, slowest / 1e9, fastest / 1e9);
      return std::string(text);
    }
  }
  return std::nullopt;
}

std::string describe(const MachineCheck& check) { return describe(check.to_json()); }

std::string describe(const nlohmann::ordered_json& check) {
  char text[160];
  std::snprintf(text, sizeof text, "FMA %.0f GFLOP/s on 1 core, %.0f on %u; triad %.1f GB/s", check.at("fma_flops_one_core").get<double>() / 1e9,
                check.at("fma_flops_threads").get<double>() / 1e9, check.at("threads").get<unsigned>(),
                check.at("triad_bandwidth_threads").get<double>() / 1e9);
  return text;
}

}  // namespace perftune
