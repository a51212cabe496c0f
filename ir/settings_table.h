#pragma once
// One declaration per setting: a component's options struct gets one table of fields (JSON key,
// member, range, one-line doc; the default is the struct's own), and from that table come the
// parser, the unknown-key check and the reference documentation (docs/settings.md). Kernel
// Tuner's strategies keep one options table each for the same reason: a setting written in three
// places (struct, parser, docs) drifts.
//
//   const SettingsTable<EvolutionOptions> table = SettingsTable<EvolutionOptions>()
//       .count("population", &EvolutionOptions::population, "configs per generation")
//       .probability("mutation_probability", &EvolutionOptions::mutation_probability, "...");
//   table.read(view, options, {"type"});   // absent keys keep the struct's defaults
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/json_view.h"

namespace perftune {

// A number as a settings table shows it: integers without a fraction, others shortest-exact.
std::string setting_number_text(double value);

template <class Options>
class SettingsTable {
 public:
  struct Field {
    std::string key;
    std::string range;  // e.g. "integer >= 1", "[0, 1]"
    std::string doc;
    std::function<std::string(const Options&)> default_text;
    std::function<void(const JsonView&, Options&)> read;
  };

  // An integer member read as a positive integer, or as a count (>= 0) where zero_allowed.
  template <class T>
  SettingsTable&& count(std::string key, T Options::*member, std::string doc, bool zero_allowed = false) && {
    static_assert(std::is_integral_v<T>);
    fields_.push_back({std::move(key), zero_allowed ? "integer >= 0" : "integer >= 1", std::move(doc),
                       [member](const Options& o) { return std::to_string(o.*member); },
                       [member, zero_allowed](const JsonView& v, Options& o) {
                         o.*member = static_cast<T>(zero_allowed ? v.as_count("a count >= 0") : v.as_positive_int());
                       }});
    return std::move(*this);
  }

  // true or false.
  SettingsTable&& flag(std::string key, bool Options::*member, std::string doc) && {
    fields_.push_back({std::move(key), "true or false", std::move(doc), [member](const Options& o) { return o.*member ? "true" : "false"; },
                       [member](const JsonView& v, Options& o) { o.*member = v.as_bool(); }});
    return std::move(*this);
  }

  // A finite number >= 0.
  SettingsTable&& non_negative(std::string key, double Options::*member, std::string doc) && {
    fields_.push_back({std::move(key), ">= 0", std::move(doc), [member](const Options& o) { return setting_number_text(o.*member); },
                       [member](const JsonView& v, Options& o) { o.*member = v.as_non_negative_number(); }});
    return std::move(*this);
  }

  // A number in [0, 1].
  SettingsTable&& probability(std::string key, double Options::*member, std::string doc) && {
    fields_.push_back({std::move(key), "[0, 1]", std::move(doc), [member](const Options& o) { return setting_number_text(o.*member); },
                       [member](const JsonView& v, Options& o) {
                         const double value = v.as_number();
                         if (value < 0 || value > 1) v.fail("a probability in [0, 1], found " + std::to_string(value));
                         o.*member = value;
                       }});
    return std::move(*this);
  }

  // An object read by its own table, into a member struct.
  template <class Nested>
  SettingsTable&& nested(std::string key, Nested Options::*member, const SettingsTable<Nested>& table, std::string doc) && {
    fields_.push_back({std::move(key), "object", std::move(doc), [](const Options&) { return std::string("below"); },
                       [member, &table](const JsonView& v, Options& o) { table.read(v, o.*member); }});
    return std::move(*this);
  }

  // A member read by the caller's own rule: `range` and `default_text` are what the docs show.
  SettingsTable&& custom(std::string key, std::string range, std::string default_text, std::string doc,
                         std::function<void(const JsonView&, Options&)> read) && {
    fields_.push_back({std::move(key), std::move(range), std::move(doc),
                       [text = std::move(default_text)](const Options&) { return text; }, std::move(read)});
    return std::move(*this);
  }

  // Another table's fields and rules over a member struct, as if they were this table's own: one
  // JSON object whose keys set two components' options.
  template <class Part>
  SettingsTable&& merge(Part Options::*member, const SettingsTable<Part>& part) && {
    for (const auto& field : part.fields_)
      fields_.push_back({field.key, field.range, field.doc, [member, text = field.default_text](const Options& o) { return text(o.*member); },
                         [member, read = field.read](const JsonView& v, Options& o) { read(v, o.*member); }});
    for (const auto& rule : part.checks_)
      checks_.push_back([member, rule](const JsonView& v, const Options& o) { rule(v, o.*member); });
    return std::move(*this);
  }

  // A rule over the whole object, checked after its members are read (e.g. a positive sum).
  SettingsTable&& check(std::function<void(const JsonView&, const Options&)> rule) && {
    checks_.push_back(std::move(rule));
    return std::move(*this);
  }

  std::vector<std::string> keys() const {
    std::vector<std::string> keys;
    for (const Field& field : fields_) keys.push_back(field.key);
    return keys;
  }

  // Reads every member `object` has into `options`; absent keys keep their values. A key that is
  // neither a field nor in `also_allowed` (the caller's own, e.g. "type") fails at its path.
  void read(const JsonView& object, Options& options, const std::vector<std::string>& also_allowed = {}) const {
    check_keys(object, also_allowed);
    read_members(object, options);
  }

  // read()'s key check alone, for a caller with rules to check between it and the members.
  void check_keys(const JsonView& object, const std::vector<std::string>& also_allowed = {}) const {
    std::vector<std::string> allowed = also_allowed;
    for (const Field& field : fields_) allowed.push_back(field.key);
    object.expect_keys(allowed);
  }

  // The same without the key check, for an object that holds other components' keys too (the
  // caller checks them all against the union of the tables' keys()).
  void read_members(const JsonView& object, Options& options) const {
    for (const Field& field : fields_)
      if (const auto member = object.find(field.key)) field.read(*member, options);
    for (const auto& rule : checks_) rule(object, options);
  }

  // A Markdown table, one row per field: key, default (the struct's), range, meaning.
  std::string markdown() const {
    const Options defaults{};
    std::ostringstream out;
    out << "| key | default | range | meaning |\n| --- | --- | --- | --- |\n";
    for (const Field& field : fields_)
      out << "| `" << field.key << "` | " << field.default_text(defaults) << " | " << field.range << " | " << field.doc << " |\n";
    return out.str();
  }

 private:
  template <class>
  friend class SettingsTable;
  std::vector<Field> fields_;
  std::vector<std::function<void(const JsonView&, const Options&)>> checks_;
};

}  // namespace perftune
