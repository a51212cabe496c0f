#pragma once
// The set of valid configs of one kernel (or one program's fusion decisions): a domain per knob
// and a validity rule. Two kinds: a product of domains filtered by a constraint, or a recorded
// space whose valid configs are exactly the listed ones (Kernel Tuner caches, TPU tile data).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/config.h"
#include "ir/random.h"

namespace perftune {

struct Knob {
  std::string name;
  std::vector<std::int64_t> values;  // distinct, in ascending order (neighbours step along it)
};

class SearchSpace {
 public:
  using Constraint = std::function<bool(const Config&)>;

  // Product space, optionally filtered. Throws std::invalid_argument for no knobs, an empty
  // domain, or repeated knob names.
  SearchSpace(std::vector<Knob> knobs, Constraint constraint = {});
  // Recorded space: valid configs are exactly `valid` (deduplicated). Throws if empty or if a
  // config has a value outside its knob's domain.
  static SearchSpace recorded(std::vector<Knob> knobs, const std::vector<Config>& valid);
  // Knob domains inferred from the listed configs (each knob's distinct values).
  static SearchSpace recorded(std::vector<std::string> names, const std::vector<Config>& valid);

  const std::vector<Knob>& knobs() const { return knobs_; }
  std::size_t dimension() const { return knobs_.size(); }
  std::vector<std::string> knob_names() const;
  bool is_recorded() const { return listed_ != nullptr; }

  bool contains(const Config& config) const;
  // Number of valid configs. Exact: the product for unconstrained spaces, the list for recorded
  // ones, and a count by enumeration (cached) for constrained product spaces up to `limit`;
  // nullopt if a constrained space is larger than `limit` to enumerate.
  std::optional<std::uint64_t> size(std::uint64_t limit = 10'000'000) const;
  // Product of the domain sizes (valid or not); saturates at UINT64_MAX.
  std::uint64_t domain_product() const;
  // Every valid config, in lexicographic order of domain indices. Throws std::length_error if
  // there are more than `limit`.
  std::vector<Config> enumerate(std::uint64_t limit = 1'000'000) const;
  // A uniformly random valid config. Throws std::runtime_error if rejection sampling fails
  // (a constraint that almost nothing satisfies).
  Config sample(Rng& rng) const;
  // Valid configs that differ in one knob by one step along its domain.
  std::vector<Config> neighbours(const Config& config) const;
  // Valid configs that differ in one knob, to any other value of its domain (Hamming distance 1).
  std::vector<Config> one_knob_changes(const Config& config) const;
  // Index of `value` in knob k's domain; -1 if absent.
  int index_of(std::size_t knob, std::int64_t value) const;
  // The config as a point of the [0, 1] knob-index cube: each knob with more than one value at
  // its domain index / (size - 1) (an absent value at 0).
  std::vector<double> index_coords(const Config& config) const;

  // {"name": value, ...} in knob order.
  nlohmann::ordered_json to_json(const Config& config) const;
  // Inverse of to_json; throws std::invalid_argument naming a missing or unknown knob.
  Config from_json(const nlohmann::json& object) const;

 private:
  std::vector<Knob> knobs_;
  Constraint constraint_;
  std::shared_ptr<const std::vector<Config>> listed_;  // recorded spaces only, sorted
  std::shared_ptr<const std::unordered_set<Config, ConfigHash>> listed_set_;
  mutable std::optional<std::uint64_t> cached_size_;
};

// The one check of a config read from outside (a record log line, an imported measurement): one
// value per knob of `space`, in its order, each in its knob's domain, and the config valid in the
// space. Empty when it is; else what is wrong, naming the knob.
std::optional<std::string> config_problem(const SearchSpace& space, const Config& config);
// The same for a config with its knob names (a record): every knob of the space present once and
// no other; `ordered` receives the values in the space's knob order.
std::optional<std::string> named_config_problem(const SearchSpace& space, const std::vector<std::string>& names,
                                                const Config& config, Config* ordered = nullptr);

}  // namespace perftune
