#include "surrogate/training/data_split.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "ir/input_error.h"
#include "ir/random.h"
#include "surrogate/fusion/fusion_evaluation.h"

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
  json.expect_keys({"by", "test", "validation", "test_fraction", "validation_fraction", "seed", "disjoint_from_test", "comment"});
  SplitSpec spec;
  spec.by = json.at("by").as_string();
  if (spec.by != "device" && spec.by != "kernel" && spec.by != "program" && spec.by != "leave_one_out" &&
      spec.by != "leave_one_program_out")
    json.at("by").fail("\"device\", \"kernel\", \"program\", \"leave_one_out\" or \"leave_one_program_out\" (never by config)");
  if (auto v = json.find("test")) spec.test = v->as_string_list();
  if (auto v = json.find("validation")) spec.validation = v->as_string_list();
  if (auto v = json.find("disjoint_from_test")) {
    spec.disjoint_from_test = v->as_string_list();
    if (spec.by != "device") v->fail("a device split (\"by\": \"device\"): only it has named test sources");
  }
  if (spec.by == "device" && spec.test.empty()) json.fail("\"test\": the devices to hold out");
  if (auto v = json.find("test_fraction")) {
    spec.test_fraction = v->as_non_negative_number();
    if (spec.test_fraction <= 0 || spec.test_fraction >= 1) v->fail("a fraction in (0, 1)");
  }
  if (auto v = json.find("validation_fraction")) {
    spec.validation_fraction = v->as_non_negative_number();
    if (spec.validation_fraction >= 1) v->fail("a fraction in [0, 1)");
  }
  if (auto v = json.find("seed")) spec.seed = v->as_count();
  return spec;
}

namespace {

// Kernels grouped so that a group is never split: by kernel key, or by program (see data_split.h).
struct Groups {
  std::vector<std::string> names;  // first-seen order, so a seed picks the same groups on every machine
  std::map<std::string, std::vector<const MeasuredKernel*>> members;
  // Per kernel that whole programs contain, every such program (its group is the first).
  std::map<const MeasuredKernel*, std::vector<std::string>> also_in;

  // True if `kernel` belongs to a group of `held` (its own, or a program that contains it).
  bool touches(const MeasuredKernel* kernel, const std::set<std::string>& held) const {
    const auto owners = also_in.find(kernel);
    return owners != also_in.end() &&
           std::any_of(owners->second.begin(), owners->second.end(), [&](const std::string& p) { return held.count(p) > 0; });
  }
};

Groups group_kernels(const std::vector<SourcedKernel>& kernels, bool by_program) {
  Groups groups;
  // Whole programs (fusion measurements) and, per kernel, the programs that contain it.
  std::vector<const MeasuredKernel*> programs;
  if (by_program)
    for (const SourcedKernel& k : kernels)
      if (is_fusion_space(*k.kernel)) programs.push_back(k.kernel);
  for (const SourcedKernel& k : kernels) {
    std::string group = k.kernel->kernel.key();
    if (by_program) {
      group = program_of(*k.kernel);
      if (!is_fusion_space(*k.kernel)) {
        std::vector<std::string> owners;
        for (const MeasuredKernel* program : programs)
          if (is_part_of(k.kernel->kernel, program->kernel.body())) owners.push_back(program_of(*program));
        if (!owners.empty()) {
          group = owners.front();
          groups.also_in[k.kernel] = owners;
        }
      }
    }
    if (!groups.members.count(group)) groups.names.push_back(group);
    groups.members[group].push_back(k.kernel);
  }
  return groups;
}

// One fold over the groups in `order` (the order training samples them by): `test` groups (and
// every kernel a test program contains) tested, `validation` groups validate, the rest train.
Fold split_groups(const Groups& groups, const std::vector<std::string>& order, const std::string& name,
                  const std::set<std::string>& test, const std::set<std::string>& validation) {
  Fold fold{name, {}, {}, {}};
  for (const std::string& group : order)
    for (const MeasuredKernel* kernel : groups.members.at(group)) {
      auto& side = test.count(group) || groups.touches(kernel, test) ? fold.test
                   : validation.count(group)                          ? fold.validation
                                                                      : fold.train;
      side.push_back(kernel);
    }
  return fold;
}

// `names` in a seeded random order.
std::vector<std::string> shuffled(std::vector<std::string> names, std::uint64_t seed) {
  Rng rng(seed);
  shuffle_in_place(names, rng);
  return names;
}

std::size_t share(double fraction, std::size_t count) { return static_cast<std::size_t>(fraction * count + 0.5); }

// By "device" with a validation_fraction: that share of the training side's program groups
// (seeded) validates instead of training, so model selection scores programs the model did not fit.
Fold with_validation_programs(Fold fold, const std::vector<SourcedKernel>& kernels, const SplitSpec& spec) {
  const std::set<const MeasuredKernel*> trained(fold.train.begin(), fold.train.end());
  std::vector<SourcedKernel> trainable;
  for (const SourcedKernel& k : kernels)
    if (trained.count(k.kernel)) trainable.push_back(k);
  const Groups groups = group_kernels(trainable, /*by_program=*/true);
  const std::vector<std::string> order = shuffled(groups.names, spec.seed);
  // At least one program is left to train on.
  const auto count = static_cast<std::ptrdiff_t>(std::min(order.size() - 1, share(spec.validation_fraction, order.size())));
  Fold split = split_groups(groups, groups.names, fold.name, {}, {order.begin(), order.begin() + count});
  fold.train = std::move(split.train);
  fold.validation.insert(fold.validation.end(), split.validation.begin(), split.validation.end());
  return fold;
}

}  // namespace

std::vector<Fold> make_folds(const std::vector<SourcedKernel>& kernels, const SplitSpec& spec, const std::string& file) {
  std::vector<Fold> folds;
  if (spec.by == "device") {
    Fold fold{"test", {}, {}, {}};
    std::set<std::pair<std::string, std::string>> tested;
    for (const SourcedKernel& k : kernels)
      if (matches_any(spec.test, k)) tested.insert({k.kernel->device, k.kernel->kernel.key()});
    for (const SourcedKernel& k : kernels) {
      if (matches_any(spec.test, k)) fold.test.push_back(k.kernel);
      // A generated program's kernel may equal a held-out one (the same add of the same shape):
      // it is held out too, not trained on.
      else if (!is_fusion_space(*k.kernel) && tested.count({k.kernel->device, k.kernel->kernel.key()})) {
        if (matches_any(spec.disjoint_from_test, k))  // a collection that promised a clean split broke it
          throw InputError(file, "$.split.disjoint_from_test",
                           "sources that share no kernel with the test side, but " + k.kernel->kernel.name() + " (" +
                               k.kernel->kernel.key() + ") of " + k.source + " is a test kernel too");
        ++fold.left_out;
      }
      else if (matches_any(spec.validation, k)) fold.validation.push_back(k.kernel);
      else fold.train.push_back(k.kernel);
    }
    if (spec.validation_fraction > 0) fold = with_validation_programs(std::move(fold), kernels, spec);
    folds.push_back(std::move(fold));
  } else if (spec.by == "leave_one_out") {
    const Groups groups = group_kernels(kernels, /*by_program=*/false);
    for (const std::string& held : groups.names)
      folds.push_back(split_groups(groups, groups.names, groups.members.at(held).front()->kernel.name(), {held}, {}));
  } else if (spec.by == "leave_one_program_out") {
    const Groups groups = group_kernels(kernels, /*by_program=*/true);
    for (const std::string& held : groups.names) {
      // Validation programs are drawn from the other programs only, with the seed and the fold.
      std::vector<std::string> others = groups.names;
      std::erase(others, held);
      const std::vector<std::string> order = shuffled(others, spec.seed + folds.size());
      // At least one program is left to train on.
      const auto validation_count = order.empty() ? 0 : std::min(order.size() - 1, share(spec.validation_fraction, order.size()));
      folds.push_back(split_groups(groups, groups.names, held, {held},
                                   {order.begin(), order.begin() + static_cast<std::ptrdiff_t>(validation_count)}));
    }
  } else {
    const Groups groups = group_kernels(kernels, spec.by == "program");
    const std::vector<std::string> order = shuffled(groups.names, spec.seed);
    const std::size_t test_count = std::min(order.size(), std::max<std::size_t>(1, share(spec.test_fraction, order.size())));
    const std::size_t validation_count = share(spec.validation_fraction, order.size() - test_count);
    const auto at = [&](std::size_t i) { return order.begin() + static_cast<std::ptrdiff_t>(std::min(i, order.size())); };
    folds.push_back(split_groups(groups, order, "test", {order.begin(), at(test_count)},
                                 {at(test_count), at(test_count + validation_count)}));
  }
  for (const Fold& fold : folds) {
    if (fold.test.empty()) throw InputError(file, "$.split", "a split whose test side is not empty (no kernel matched)");
    if (fold.train.empty()) throw InputError(file, "$.split", "a split that leaves kernels to train on");
    // A kernel measured on the test device must not be trained on there too. A whole program's
    // fusion measurements never train (the model learns kernels).
    std::set<std::pair<std::string, std::string>> tested;
    for (const MeasuredKernel* k : fold.test) tested.insert({k->device, k->kernel.key()});
    for (const auto* side : {&fold.train, &fold.validation})
      for (const MeasuredKernel* k : *side)
        if (!is_fusion_space(*k) && tested.count({k->device, k->kernel.key()}))
          throw InputError(file, "$.split", "a split whose test kernels are not trained on, but " + k->kernel.name() + " (" +
                                                k->kernel.key() + ") on " + k->device + " is on both sides");
  }
  return folds;
}

}  // namespace perftune
