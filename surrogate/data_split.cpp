#include "surrogate/data_split.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "ir/input_error.h"
#include "ir/random.h"
#include "surrogate/fusion_evaluation.h"

namespace perftune {

namespace {

std::string normalized(const std::string& text) {
  std::string out;
  for (char c : text)
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool matches_any(const std::vector<std::string>& names, const SourcedKernel& k) {
  const std::string stem = std::filesystem::path(k.source).filename().string();
  return std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    return device_matches(name, k.kernel->device) || device_matches(name, stem);
  });
}

}  // namespace

bool device_matches(const std::string& name, const std::string& device_or_source) {
  const std::string n = normalized(name);
  return !n.empty() && normalized(device_or_source).find(n) != std::string::npos;
}

std::string program_of(const MeasuredKernel& kernel) {
  const std::string& name = kernel.kernel.name();
  const auto slash = name.find('/');
  if (slash != std::string::npos) return name.substr(0, slash);
  return kernel.kernel.body().name().empty() ? name : kernel.kernel.body().name();
}

bool is_part_of(const Kernel& kernel, const Program& program) {
  const Program& body = kernel.body();
  bool any = false;
  for (OpId id = 0; id < body.size(); ++id) {
    const Op& op = body.op(id);
    if (op.is_parameter()) continue;
    const auto found = program.find(op.name);
    if (!found || program.op(*found).opcode != op.opcode || program.op(*found).shape != op.shape) return false;
    any = true;
  }
  return any;
}

SplitSpec SplitSpec::from_json(const JsonView& json) {
  json.expect_keys({"by", "test", "validation", "test_fraction", "validation_fraction", "seed", "comment"});
  SplitSpec spec;
  spec.by = json.at("by").as_string();
  if (spec.by != "device" && spec.by != "kernel" && spec.by != "program" && spec.by != "leave_one_out")
    json.at("by").fail("\"device\", \"kernel\", \"program\" or \"leave_one_out\" (never by config)");
  if (auto v = json.find("test")) spec.test = v->as_string_list();
  if (auto v = json.find("validation")) spec.validation = v->as_string_list();
  if (spec.by == "device" && spec.test.empty()) json.fail("\"test\": the devices to hold out");
  if (auto v = json.find("test_fraction")) {
    spec.test_fraction = v->as_non_negative_number();
    if (spec.test_fraction <= 0 || spec.test_fraction >= 1) v->fail("a fraction in (0, 1)");
  }
  if (auto v = json.find("validation_fraction")) {
    spec.validation_fraction = v->as_non_negative_number();
    if (spec.validation_fraction >= 1) v->fail("a fraction in [0, 1)");
  }
  if (auto v = json.find("seed")) spec.seed = static_cast<std::uint64_t>(v->as_int());
  return spec;
}

std::vector<Fold> make_folds(const std::vector<SourcedKernel>& kernels, const SplitSpec& spec, const std::string& file) {
  std::vector<Fold> folds;
  if (spec.by == "device") {
    Fold fold{"test", {}, {}, {}};
    for (const SourcedKernel& k : kernels) {
      if (matches_any(spec.test, k)) fold.test.push_back(k.kernel);
      else if (matches_any(spec.validation, k)) fold.validation.push_back(k.kernel);
      else fold.train.push_back(k.kernel);
    }
    folds.push_back(std::move(fold));
  } else {
    // Groups in first-seen order, so a seed picks the same groups on every machine.
    std::vector<std::string> group_names;
    std::map<std::string, std::vector<const MeasuredKernel*>> groups;
    // Whole programs (fusion measurements) and, per kernel, the programs that contain it.
    std::vector<const MeasuredKernel*> programs;
    if (spec.by == "program")
      for (const SourcedKernel& k : kernels)
        if (is_fusion_space(*k.kernel)) programs.push_back(k.kernel);
    std::map<const MeasuredKernel*, std::vector<std::string>> also_in;
    for (const SourcedKernel& k : kernels) {
      std::string group = k.kernel->kernel.key();
      if (spec.by == "program") {
        group = program_of(*k.kernel);
        if (!is_fusion_space(*k.kernel)) {
          std::vector<std::string> owners;
          for (const MeasuredKernel* program : programs)
            if (is_part_of(k.kernel->kernel, program->kernel.body())) owners.push_back(program_of(*program));
          if (!owners.empty()) {
            group = owners.front();
            also_in[k.kernel] = owners;
          }
        }
      }
      if (!groups.count(group)) group_names.push_back(group);
      groups[group].push_back(k.kernel);
    }
    if (spec.by == "leave_one_out") {
      for (const std::string& held : group_names) {
        Fold fold{groups[held].front()->kernel.name(), {}, {}, groups[held]};
        for (const std::string& other : group_names)
          if (other != held) fold.train.insert(fold.train.end(), groups[other].begin(), groups[other].end());
        folds.push_back(std::move(fold));
      }
    } else {
      Rng rng(spec.seed);
      std::vector<std::string> order = group_names;
      for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[uniform_index(rng, i)]);
      const auto test_count = std::max<std::size_t>(1, static_cast<std::size_t>(spec.test_fraction * order.size() + 0.5));
      const auto validation_count = static_cast<std::size_t>(spec.validation_fraction * (order.size() - std::min(order.size(), test_count)) + 0.5);
      Fold fold{"test", {}, {}, {}};
      const std::set<std::string> test_groups(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min(test_count, order.size())));
      for (std::size_t i = 0; i < order.size(); ++i) {
        for (const MeasuredKernel* kernel : groups[order[i]]) {
          // A kernel that a test program also contains is tested, never trained on.
          const auto owners = also_in.find(kernel);
          const bool in_test_program = owners != also_in.end() &&
              std::any_of(owners->second.begin(), owners->second.end(), [&](const std::string& p) { return test_groups.count(p) > 0; });
          auto& side = i < test_count || in_test_program ? fold.test
                       : i < test_count + validation_count ? fold.validation : fold.train;
          side.push_back(kernel);
        }
      }
      folds.push_back(std::move(fold));
    }
  }
  for (const Fold& fold : folds) {
    if (fold.test.empty()) throw InputError(file, "$.split", "a split whose test side is not empty (no kernel matched)");
    if (fold.train.empty()) throw InputError(file, "$.split", "a split that leaves kernels to train on");
  }
  return folds;
}

}  // namespace perftune
