#include "ir/search_space.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace perftune {

namespace {

void validate_knobs(std::vector<Knob>& knobs) {
  if (knobs.empty()) throw std::invalid_argument("search space has no knobs");
  std::set<std::string> names;
  for (Knob& knob : knobs) {
    if (knob.values.empty()) throw std::invalid_argument("knob '" + knob.name + "' has an empty domain");
    if (!names.insert(knob.name).second) throw std::invalid_argument("knob '" + knob.name + "' is repeated");
    std::sort(knob.values.begin(), knob.values.end());
    knob.values.erase(std::unique(knob.values.begin(), knob.values.end()), knob.values.end());
  }
}

// Advances `digits` like an odometer over the knobs' domains; false when it wraps.
bool next_index(std::vector<std::size_t>& digits, const std::vector<Knob>& knobs) {
  for (std::size_t k = knobs.size(); k-- > 0;) {
    if (++digits[k] < knobs[k].values.size()) return true;
    digits[k] = 0;
  }
  return false;
}

}  // namespace

SearchSpace::SearchSpace(std::vector<Knob> knobs, Constraint constraint)
    : knobs_(std::move(knobs)), constraint_(std::move(constraint)) {
  validate_knobs(knobs_);
}

SearchSpace SearchSpace::recorded(std::vector<Knob> knobs, const std::vector<Config>& valid) {
  SearchSpace space(std::move(knobs));
  std::vector<Config> sorted;
  sorted.reserve(valid.size());
  for (const Config& config : valid) {
    if (config.values.size() != space.dimension())
      throw std::invalid_argument("recorded config " + config.to_string() + " has " +
                                  std::to_string(config.values.size()) + " values; expected " +
                                  std::to_string(space.dimension()));
    for (std::size_t k = 0; k < space.dimension(); ++k)
      if (space.index_of(k, config.values[k]) < 0)
        throw std::invalid_argument("recorded config " + config.to_string() + " has value " +
                                    std::to_string(config.values[k]) + " outside the domain of knob '" +
                                    space.knobs_[k].name + "'");
    sorted.push_back(config);
  }
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.empty()) throw std::invalid_argument("recorded search space has no configs");
  space.listed_set_ = std::make_shared<std::unordered_set<Config, ConfigHash>>(sorted.begin(), sorted.end());
  space.listed_ = std::make_shared<std::vector<Config>>(std::move(sorted));
  return space;
}

SearchSpace SearchSpace::recorded(std::vector<std::string> names, const std::vector<Config>& valid) {
  std::vector<Knob> knobs;
  for (std::size_t k = 0; k < names.size(); ++k) {
    Knob knob{names[k], {}};
    for (const Config& config : valid)
      if (k < config.values.size()) knob.values.push_back(config.values[k]);
    knobs.push_back(std::move(knob));
  }
  return recorded(std::move(knobs), valid);
}

std::vector<std::string> SearchSpace::knob_names() const {
  std::vector<std::string> names;
  for (const Knob& knob : knobs_) names.push_back(knob.name);
  return names;
}

int SearchSpace::index_of(std::size_t knob, std::int64_t value) const {
  const auto& values = knobs_[knob].values;
  const auto it = std::lower_bound(values.begin(), values.end(), value);
  return (it != values.end() && *it == value) ? static_cast<int>(it - values.begin()) : -1;
}

bool SearchSpace::contains(const Config& config) const {
  if (config.values.size() != knobs_.size()) return false;
  if (listed_set_) return listed_set_->count(config) > 0;
  for (std::size_t k = 0; k < knobs_.size(); ++k)
    if (index_of(k, config.values[k]) < 0) return false;
  return !constraint_ || constraint_(config);
}

std::uint64_t SearchSpace::domain_product() const {
  std::uint64_t product = 1;
  for (const Knob& knob : knobs_) {
    if (product > std::numeric_limits<std::uint64_t>::max() / knob.values.size())
      return std::numeric_limits<std::uint64_t>::max();
    product *= knob.values.size();
  }
  return product;
}

std::optional<std::uint64_t> SearchSpace::size(std::uint64_t limit) const {
  if (listed_) return listed_->size();
  if (!constraint_) return domain_product();
  if (cached_size_) return cached_size_;
  if (domain_product() > limit) return std::nullopt;
  cached_size_ = enumerate(limit).size();
  return cached_size_;
}

std::vector<Config> SearchSpace::enumerate(std::uint64_t limit) const {
  if (listed_) {
    if (listed_->size() > limit) throw std::length_error("search space has more configs than the limit");
    return *listed_;
  }
  if (domain_product() > limit && !constraint_)
    throw std::length_error("search space has " + std::to_string(domain_product()) +
                            " configs, more than the limit of " + std::to_string(limit));
  std::vector<Config> result;
  std::vector<std::size_t> digits(knobs_.size(), 0);
  std::uint64_t visited = 0;
  do {
    if (++visited > std::max<std::uint64_t>(limit, 1) * 64)
      throw std::length_error("search space is too large to enumerate");
    Config config;
    config.values.reserve(knobs_.size());
    for (std::size_t k = 0; k < knobs_.size(); ++k) config.values.push_back(knobs_[k].values[digits[k]]);
    if (!constraint_ || constraint_(config)) {
      if (result.size() >= limit) throw std::length_error("search space has more configs than the limit");
      result.push_back(std::move(config));
    }
  } while (next_index(digits, knobs_));
  return result;
}

Config SearchSpace::sample(Rng& rng) const {
  if (listed_) return (*listed_)[uniform_index(rng, listed_->size())];
  // Rejection sampling is uniform over the valid configs; 100k tries covers constraints that
  // keep at least ~0.01% of the domain, far sparser than any real space we know of.
  for (int attempt = 0; attempt < 100'000; ++attempt) {
    Config config;
    config.values.reserve(knobs_.size());
    for (const Knob& knob : knobs_) config.values.push_back(knob.values[uniform_index(rng, knob.values.size())]);
    if (!constraint_ || constraint_(config)) return config;
  }
  throw std::runtime_error("could not sample a valid config: the space's constraint rejects almost everything");
}

std::vector<Config> SearchSpace::neighbours(const Config& config) const {
  std::vector<Config> result;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    const int index = index_of(k, config.values[k]);
    if (index < 0) continue;
    for (int step : {-1, 1}) {
      const int next = index + step;
      if (next < 0 || next >= static_cast<int>(knobs_[k].values.size())) continue;
      Config neighbour = config;
      neighbour.values[k] = knobs_[k].values[next];
      if (contains(neighbour)) result.push_back(std::move(neighbour));
    }
  }
  return result;
}

std::vector<double> SearchSpace::index_coords(const Config& config) const {
  std::vector<double> z;
  for (std::size_t k = 0; k < dimension(); ++k) {
    const std::size_t size = knobs_[k].values.size();
    if (size < 2) continue;
    const int index = index_of(k, config.values.at(k));
    z.push_back(index < 0 ? 0.0 : static_cast<double>(index) / static_cast<double>(size - 1));
  }
  return z;
}

std::vector<Config> SearchSpace::one_knob_changes(const Config& config) const {
  std::vector<Config> result;
  for (std::size_t k = 0; k < knobs_.size() && k < config.values.size(); ++k)
    for (const std::int64_t value : knobs_[k].values) {
      if (value == config.values[k]) continue;
      Config changed = config;
      changed.values[k] = value;
      if (contains(changed)) result.push_back(std::move(changed));
    }
  return result;
}

nlohmann::ordered_json SearchSpace::to_json(const Config& config) const {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < knobs_.size() && k < config.values.size(); ++k) object[knobs_[k].name] = config.values[k];
  return object;
}

Config SearchSpace::from_json(const nlohmann::json& object) const {
  if (!object.is_object()) throw std::invalid_argument("a config must be a JSON object of knob values");
  Config config;
  for (const Knob& knob : knobs_) {
    const auto it = object.find(knob.name);
    if (it == object.end()) throw std::invalid_argument("config is missing knob '" + knob.name + "'");
    if (!it->is_number_integer()) throw std::invalid_argument("knob '" + knob.name + "' must be an integer");
    config.values.push_back(it->get<std::int64_t>());
  }
  for (const auto& item : object.items()) {
    const bool known = std::any_of(knobs_.begin(), knobs_.end(), [&](const Knob& k) { return k.name == item.key(); });
    if (!known) throw std::invalid_argument("config has unknown knob '" + item.key() + "'");
  }
  return config;
}

std::optional<std::string> config_problem(const SearchSpace& space, const Config& config) {
  if (config.values.size() != space.dimension())
    return "a config of " + std::to_string(space.dimension()) + " knob values, not " + std::to_string(config.values.size());
  for (std::size_t k = 0; k < space.dimension(); ++k)
    if (space.index_of(k, config.values[k]) < 0)
      return "a value of knob '" + space.knobs()[k].name + "' from its domain, not " + std::to_string(config.values[k]);
  if (!space.contains(config)) return std::string("a config inside the kernel's space (this combination of values is not valid there)");
  return std::nullopt;
}

std::optional<std::string> named_config_problem(const SearchSpace& space, const std::vector<std::string>& names,
                                                const Config& config, Config* ordered) {
  Config in_order;
  for (const Knob& knob : space.knobs()) {
    const auto it = std::find(names.begin(), names.end(), knob.name);
    if (it == names.end()) return "a value for every knob of the kernel's space; knob '" + knob.name + "' is missing";
    const auto index = static_cast<std::size_t>(it - names.begin());
    if (index >= config.values.size()) return "a value for knob '" + knob.name + "'";
    in_order.values.push_back(config.values[index]);
  }
  for (const std::string& name : names)
    if (std::find_if(space.knobs().begin(), space.knobs().end(), [&](const Knob& k) { return k.name == name; }) == space.knobs().end())
      return "only knobs of the kernel's space; '" + name + "' is not one";
  if (names.size() != space.dimension()) return std::string("each knob once");
  if (auto problem = config_problem(space, in_order)) return problem;
  if (ordered) *ordered = std::move(in_order);
  return std::nullopt;
}

}  // namespace perftune
