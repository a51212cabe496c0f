#include "ir/corpus_summary.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace perftune {

nlohmann::ordered_json summarize(const Corpus& corpus) {
  std::size_t instructions = 0, computations = 0;
  for (const auto& program : corpus.programs) {
    instructions += program->instruction_count_with_called();
    computations += program->computation_count_with_called();
  }
  std::set<std::string> devices;
  nlohmann::ordered_json per_kernel = nlohmann::ordered_json::array();
  for (const MeasuredKernel& measured : corpus.kernels) {
    const std::size_t kernel_instructions = measured.kernel.body().instruction_count_with_called();
    instructions += kernel_instructions;
    if (!measured.device.empty()) devices.insert(measured.device);
    nlohmann::ordered_json row;
    row["name"] = measured.kernel.name();
    row["key"] = measured.kernel.key();
    row["device"] = measured.device;
    row["instructions"] = kernel_instructions;
    row["knobs"] = measured.space ? measured.space->knob_names() : std::vector<std::string>{};
    row["measurements"] = measured.measurements.size();
    row["failed"] = measured.failed_count();
    const auto best = measured.best_index();
    row["best_seconds"] = best ? nlohmann::ordered_json(measured.measurements[*best].result.seconds) : nlohmann::ordered_json();
    if (measured.default_index) {
      const auto& result = measured.measurements[*measured.default_index].result;
      row["default_seconds"] = result.ok() ? nlohmann::ordered_json(result.seconds) : nlohmann::ordered_json();
    }
    per_kernel.push_back(std::move(row));
  }
  nlohmann::ordered_json summary;
  summary["format"] = corpus.format;
  summary["path"] = corpus.path;
  summary["programs"] = corpus.programs.size();
  summary["computations"] = computations;
  summary["kernels"] = corpus.kernels.size();
  summary["instructions"] = instructions;
  summary["measurements"] = corpus.measurement_count();
  summary["failed"] = corpus.failed_count();
  summary["program_measurements"] = corpus.program_measurements.size();
  summary["devices"] = devices;
  summary["per_kernel"] = std::move(per_kernel);
  summary["notes"] = corpus.notes;
  return summary;
}

std::string summary_table(const nlohmann::ordered_json& s) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%s (%s)\n  programs %zu, computations %zu, kernels %zu, instructions %zu\n"
                "  measurements %zu (%zu failed)\n",
                s["path"].get<std::string>().c_str(), s["format"].get<std::string>().c_str(),
                s["programs"].get<std::size_t>(), s["computations"].get<std::size_t>(), s["kernels"].get<std::size_t>(),
                s["instructions"].get<std::size_t>(), s["measurements"].get<std::size_t>(), s["failed"].get<std::size_t>());
  out += line;
  if (s.contains("notes"))
    for (const auto& note : s["notes"]) out += "  note: " + note.get<std::string>() + "\n";
  if (s["per_kernel"].empty()) return out;
  // Names and devices are never cut: GPUs of one family share a long prefix ("NVIDIA GeForce RTX
  // 2080 Ti", "NVIDIA GeForce RTX 3060 Laptop GPU"), and a cut column made them look the same.
  int name_width = 28, device_width = 18;
  for (const auto& row : s["per_kernel"]) {
    name_width = std::max(name_width, static_cast<int>(row["name"].get<std::string>().size()));
    device_width = std::max(device_width, static_cast<int>(row["device"].get<std::string>().size()));
  }
  std::snprintf(line, sizeof line, "  %-*s %-*s %6s %6s %14s %14s\n", name_width, "kernel", device_width, "device", "runs", "failed",
                "best (s)", "default (s)");
  out += line;
  for (const auto& row : s["per_kernel"]) {
    auto seconds = [](const nlohmann::ordered_json& v) {
      char buffer[32];
      if (v.is_number()) std::snprintf(buffer, sizeof buffer, "%.4g", v.get<double>());
      else std::snprintf(buffer, sizeof buffer, "-");
      return std::string(buffer);
    };
    std::snprintf(line, sizeof line, "  %-*s %-*s %6zu %6zu %14s %14s\n", name_width, row["name"].get<std::string>().c_str(),
                  device_width, row["device"].get<std::string>().c_str(), row["measurements"].get<std::size_t>(),
                  row["failed"].get<std::size_t>(), seconds(row["best_seconds"]).c_str(),
                  seconds(row.value("default_seconds", nlohmann::ordered_json())).c_str());
    out += line;
  }
  return out;
}

}  // namespace perftune
