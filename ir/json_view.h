#pragma once
// A JSON value together with where it sits (file and JSON path), so that every config and
// program parser reports bad input the same way: "campaign.json: $.budget.measurements: expected
// a positive integer". Unknown keys are rejected with their path.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace perftune {

// Reads and parses a JSON file; a syntax error becomes an InputError naming line and column.
nlohmann::json parse_json_file(const std::string& path);
// Parses JSON text; `file` names it in errors. Rejects an object with a key twice (see below).
nlohmann::json parse_json_text(const std::string& text, const std::string& file);

// A key that appears twice in one object. nlohmann keeps the last value silently, but which one
// the writer meant is unknown ({"seconds": 1e-3, "seconds": 0}), so every reader rejects it.
struct DuplicateJsonKey : std::runtime_error {
  explicit DuplicateJsonKey(const std::string& key);
  std::string key;
};
// nlohmann::json::parse, throwing DuplicateJsonKey for a repeated key (and nlohmann's own
// exceptions for syntax errors and numbers out of range). For readers that handle those
// themselves, such as the record log; parse_json_text turns all of them into InputError.
nlohmann::json parse_json_unique_keys(const std::string& text);

class JsonView {
 public:
  JsonView(const nlohmann::json& value, std::string file, std::string path = "$");

  const nlohmann::json& value() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool has(std::string_view key) const;
  JsonView at(std::string_view key) const;  // required member
  std::optional<JsonView> find(std::string_view key) const;
  JsonView at(std::size_t index) const;
  std::size_t size() const;  // array length (fails if not an array)
  std::vector<JsonView> elements() const;

  // Fails unless this is an object whose keys are all in `allowed`.
  void expect_keys(std::initializer_list<std::string_view> allowed) const;
  void expect_keys(const std::vector<std::string>& allowed) const;

  std::string as_string() const;
  std::int64_t as_int() const;
  std::int64_t as_positive_int() const;  // > 0
  // >= 0 (counts and seeds: a negative one would wrap to a huge unsigned value); `what` names it in
  // the error, e.g. "a count >= 0 of measurements".
  std::uint64_t as_count(const std::string& what = "a non-negative integer") const;
  double as_number() const;
  double as_non_negative_number() const;  // finite and >= 0
  bool as_bool() const;
  std::vector<std::int64_t> as_int_list() const;
  std::vector<std::string> as_string_list() const;

  // Member with a default when absent.
  std::string get_string(std::string_view key, const std::string& fallback) const;
  std::int64_t get_int(std::string_view key, std::int64_t fallback) const;
  double get_number(std::string_view key, double fallback) const;
  bool get_bool(std::string_view key, bool fallback) const;

  [[noreturn]] void fail(const std::string& expected) const;

 private:
  const nlohmann::json* value_;
  std::string file_;
  std::string path_;
};

}  // namespace perftune
