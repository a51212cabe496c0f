#include "surrogate/features/feature_vocabulary.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ir/knob_roles.h"

namespace perftune {

void check_feature_schema(const JsonView& version) {
  const auto found = version.as_int();
  if (found != kFeatureSchemaVersion)
    version.fail("feature schema version " + std::to_string(kFeatureSchemaVersion) + " (this build), found " +
                 std::to_string(found) + "; retrain the model with this build");
}

double signed_log2(double value) { return std::copysign(std::log2(1.0 + std::fabs(value)), value); }

namespace {

std::set<std::string> opcodes_of(const Kernel& kernel) {
  std::set<std::string> found;
  const Program& body = kernel.body();
  for (OpId id = 0; id < body.size(); ++id) found.insert(body.op(id).opcode);
  return found;
}

}  // namespace

FeatureVocabulary FeatureVocabulary::build(std::span<const MeasuredKernel* const> kernels, int min_opcode_count) {
  FeatureVocabulary vocabulary;
  std::map<std::string, int> counts;
  std::set<std::string> seen_keys;
  for (const MeasuredKernel* measured : kernels) {
    if (seen_keys.insert(measured->kernel.key()).second)
      for (const std::string& opcode : opcodes_of(measured->kernel)) ++counts[opcode];
  }
  for (const auto& [opcode, count] : counts)
    if (count >= min_opcode_count) vocabulary.opcodes_.push_back(opcode);
  for (std::size_t i = 0; i < vocabulary.opcodes_.size(); ++i)
    vocabulary.opcode_ids_[vocabulary.opcodes_[i]] = static_cast<std::int64_t>(i + 1);
  for (const MeasuredKernel* measured : kernels)
    if (measured->space) vocabulary.add_knobs(*measured->space);
  return vocabulary;
}

void FeatureVocabulary::add_knobs(const SearchSpace& space) {
  for (const Knob& knob : space.knobs()) {
    if (knob_role(knob.name).role != KnobRole::kGeneric) continue;
    const double lo = signed_log2(static_cast<double>(knob.values.front()));
    const double hi = signed_log2(static_cast<double>(knob.values.back()));
    auto it = knobs_.find(knob.name);
    if (it != knobs_.end()) {
      it->second.lo = std::min(it->second.lo, lo);
      it->second.hi = std::max(it->second.hi, hi);
    } else if (knobs_.size() < kMaxGenericKnobs) {
      knobs_.emplace(knob.name, KnobNormalization{knobs_.size(), lo, hi});
    } else if (std::find(dropped_knobs_.begin(), dropped_knobs_.end(), knob.name) == dropped_knobs_.end()) {
      dropped_knobs_.push_back(knob.name);
    }
  }
}

bool FeatureVocabulary::extend(const Kernel& kernel, const SearchSpace& space, std::size_t opcode_capacity) {
  const std::size_t before_opcodes = opcodes_.size(), before_knobs = knobs_.size();
  for (const std::string& opcode : opcodes_of(kernel)) {
    if (opcode_ids_.count(opcode) || opcode_count() >= opcode_capacity) continue;
    opcodes_.push_back(opcode);
    opcode_ids_[opcode] = static_cast<std::int64_t>(opcodes_.size());
  }
  // Only new names: the ranges of known knobs stay as trained, so old features keep their meaning.
  for (const Knob& knob : space.knobs())
    if (!knobs_.count(knob.name) && knob_role(knob.name).role == KnobRole::kGeneric && knobs_.size() < kMaxGenericKnobs)
      knobs_.emplace(knob.name, KnobNormalization{knobs_.size(), signed_log2(static_cast<double>(knob.values.front())),
                                                  signed_log2(static_cast<double>(knob.values.back()))});
  return opcodes_.size() != before_opcodes || knobs_.size() != before_knobs;
}

std::int64_t FeatureVocabulary::opcode_id(const std::string& opcode) const {
  const auto it = opcode_ids_.find(opcode);
  return it == opcode_ids_.end() ? 0 : it->second;
}

const KnobNormalization* FeatureVocabulary::knob(const std::string& name) const {
  const auto it = knobs_.find(name);
  return it == knobs_.end() ? nullptr : &it->second;
}

nlohmann::ordered_json FeatureVocabulary::to_json() const {
  nlohmann::ordered_json json;
  json["opcodes"] = opcodes_;
  nlohmann::ordered_json knobs = nlohmann::ordered_json::object();
  for (const auto& [name, norm] : knobs_) knobs[name] = {{"slot", norm.slot}, {"lo", norm.lo}, {"hi", norm.hi}};
  json["knobs"] = knobs;
  return json;
}

FeatureVocabulary FeatureVocabulary::from_json(const JsonView& json) {
  json.expect_keys({"opcodes", "knobs"});
  FeatureVocabulary vocabulary;
  vocabulary.opcodes_ = json.at("opcodes").as_string_list();
  for (std::size_t i = 0; i < vocabulary.opcodes_.size(); ++i)
    if (!vocabulary.opcode_ids_.emplace(vocabulary.opcodes_[i], static_cast<std::int64_t>(i + 1)).second)
      json.at("opcodes").at(i).fail("distinct opcode names");
  const JsonView knobs = json.at("knobs");
  if (!knobs.is_object()) knobs.fail("an object of knob normalizations");
  std::set<std::size_t> slots;
  for (const auto& [name, value] : knobs.value().items()) {
    const JsonView entry = knobs.at(name);
    entry.expect_keys({"slot", "lo", "hi"});
    KnobNormalization norm{static_cast<std::size_t>(entry.at("slot").as_int()), entry.at("lo").as_number(),
                           entry.at("hi").as_number()};
    if (norm.slot >= kMaxGenericKnobs || !slots.insert(norm.slot).second)
      entry.at("slot").fail("a distinct slot below " + std::to_string(kMaxGenericKnobs));
    vocabulary.knobs_.emplace(name, norm);
  }
  return vocabulary;
}

bool FeatureVocabulary::operator==(const FeatureVocabulary& other) const {
  if (opcodes_ != other.opcodes_ || knobs_.size() != other.knobs_.size()) return false;
  for (const auto& [name, norm] : knobs_) {
    const KnobNormalization* theirs = other.knob(name);
    if (!theirs || theirs->slot != norm.slot || theirs->lo != norm.lo || theirs->hi != norm.hi) return false;
  }
  return true;
}

}  // namespace perftune
