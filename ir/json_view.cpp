#include "ir/json_view.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "ir/file_io.h"

#include "ir/input_error.h"

namespace perftune {

namespace {
std::string describe(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    default: return "the number " + value.dump();
  }
}

// nlohmann reports a byte offset; turn it into line:column for humans.
std::string line_and_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}
}  // namespace

DuplicateJsonKey::DuplicateJsonKey(const std::string& repeated)
    : std::runtime_error("an object with each key once; \"" + repeated + "\" appears twice"), key(repeated) {}

nlohmann::json parse_json_unique_keys(const std::string& text) {
  std::vector<std::unordered_set<std::string>> open_objects;
  const nlohmann::json::parser_callback_t check = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) open_objects.emplace_back();
    else if (event == Event::object_end) open_objects.pop_back();
    else if (event == Event::key && !open_objects.back().insert(parsed.get<std::string>()).second)
      throw DuplicateJsonKey(parsed.get<std::string>());
    return true;
  };
  return nlohmann::json::parse(text, check);
}

nlohmann::json parse_json_text(const std::string& text, const std::string& file) {
  try {
    return parse_json_unique_keys(text);
  } catch (const DuplicateJsonKey& error) {
    throw InputError(file, "", error.what());
  } catch (const nlohmann::json::parse_error& error) {
    std::string what = error.what();
    const auto colon = what.rfind(": ");
    const std::size_t at = error.byte > 0 ? error.byte - 1 : 0;
    // nlohmann stops at the first letter ("last read: 'N'"), which tells a user nothing.
    for (const char* word : {"NaN", "Infinity", "-Infinity", "nan", "inf", "-inf"})
      if (text.compare(at, std::strlen(word), word) == 0 || (at > 0 && text.compare(at - 1, std::strlen(word), word) == 0))
        throw InputError(file, line_and_column(text, at), "valid JSON, which has no NaN or Infinity (a number must be finite)");
    throw InputError(file, line_and_column(text, at),
                     "valid JSON (" + (colon == std::string::npos ? what : what.substr(colon + 2)) + ")");
  } catch (const nlohmann::json::out_of_range& error) {
    // A number beyond double's range ("1e400"); nlohmann reports no position for it (found by fuzzing).
    std::string what = error.what();
    const auto bracket = what.find("] ");
    throw InputError(file, "", "numbers within double's range (" + (bracket == std::string::npos ? what : what.substr(bracket + 2)) + ")");
  }
}

nlohmann::json parse_json_file(const std::string& path) { return parse_json_text(read_file(path), path); }

JsonView::JsonView(const nlohmann::json& value, std::string file, std::string path)
    : value_(&value), file_(std::move(file)), path_(std::move(path)) {}

void JsonView::fail(const std::string& expected) const { throw InputError(file_, path_, expected); }

bool JsonView::has(std::string_view key) const { return value_->is_object() && value_->contains(key); }

JsonView JsonView::at(std::string_view key) const {
  if (!value_->is_object()) fail("an object, found " + describe(*value_));
  const auto it = value_->find(key);
  if (it == value_->end()) fail("a member \"" + std::string(key) + "\"");
  return JsonView(*it, file_, path_ + "." + std::string(key));
}

std::optional<JsonView> JsonView::find(std::string_view key) const {
  if (!value_->is_object()) fail("an object, found " + describe(*value_));
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonView(*it, file_, path_ + "." + std::string(key));
}

JsonView JsonView::at(std::size_t index) const {
  if (!value_->is_array()) fail("an array, found " + describe(*value_));
  if (index >= value_->size()) fail("an element at index " + std::to_string(index));
  return JsonView((*value_)[index], file_, path_ + "[" + std::to_string(index) + "]");
}

std::size_t JsonView::size() const {
  if (!value_->is_array()) fail("an array, found " + describe(*value_));
  return value_->size();
}

std::vector<JsonView> JsonView::elements() const {
  std::vector<JsonView> result;
  for (std::size_t i = 0; i < size(); ++i) result.push_back(at(i));
  return result;
}

void JsonView::expect_keys(std::initializer_list<std::string_view> allowed) const {
  expect_keys(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void JsonView::expect_keys(const std::vector<std::string>& allowed) const {
  if (!value_->is_object()) fail("an object, found " + describe(*value_));
  for (const auto& item : value_->items()) {
    if (std::find(allowed.begin(), allowed.end(), item.key()) != allowed.end()) continue;
    std::string list;
    for (const auto& key : allowed) list += (list.empty() ? "" : ", ") + key;
    throw InputError(file_, path_ + "." + item.key(), "no such key here; expected one of: " + list);
  }
}

std::string JsonView::as_string() const {
  if (!value_->is_string()) fail("a string, found " + describe(*value_));
  return value_->get<std::string>();
}

std::int64_t JsonView::as_int() const {
  // 2^63 and above parse as unsigned; reading them as int64 would wrap to a negative number.
  if (value_->is_number_unsigned() && value_->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    fail("an integer below 2^63, found " + value_->dump());
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_float()) {
    // 1e12 is an integer written in exponent notation; beyond 2^53 a double no longer says which one.
    constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
    const double x = value_->get<double>();
    if (x != std::floor(x)) fail("an integer, found " + value_->dump() + ", which has a fraction");
    if (std::fabs(x) > kExactIntegers) fail("an integer (in exponent notation at most 2^53), found " + value_->dump());
    return static_cast<std::int64_t>(x);
  }
  fail("an integer, found " + describe(*value_));
}

std::int64_t JsonView::as_positive_int() const {
  const std::int64_t value = as_int();
  if (value <= 0) fail("a positive integer, found " + std::to_string(value));
  return value;
}

std::uint64_t JsonView::as_count(const std::string& what) const {
  const std::int64_t value = as_int();
  if (value < 0) fail(what + ", found " + std::to_string(value));
  return static_cast<std::uint64_t>(value);
}

double JsonView::as_number() const {
  if (!value_->is_number()) fail("a number, found " + describe(*value_));
  const double value = value_->get<double>();
  if (!std::isfinite(value)) fail("a finite number");
  return value;
}

double JsonView::as_non_negative_number() const {
  const double value = as_number();
  if (value < 0) fail("a non-negative number, found " + std::to_string(value));
  return value;
}

bool JsonView::as_bool() const {
  if (!value_->is_boolean()) fail("true or false, found " + describe(*value_));
  return value_->get<bool>();
}

std::vector<std::int64_t> JsonView::as_int_list() const {
  std::vector<std::int64_t> result;
  for (const JsonView& element : elements()) result.push_back(element.as_int());
  return result;
}

std::vector<std::string> JsonView::as_string_list() const {
  std::vector<std::string> result;
  for (const JsonView& element : elements()) result.push_back(element.as_string());
  return result;
}

std::string JsonView::get_string(std::string_view key, const std::string& fallback) const {
  const auto member = find(key);
  return member ? member->as_string() : fallback;
}

std::int64_t JsonView::get_int(std::string_view key, std::int64_t fallback) const {
  const auto member = find(key);
  return member ? member->as_int() : fallback;
}

double JsonView::get_number(std::string_view key, double fallback) const {
  const auto member = find(key);
  return member ? member->as_number() : fallback;
}

bool JsonView::get_bool(std::string_view key, bool fallback) const {
  const auto member = find(key);
  return member ? member->as_bool() : fallback;
}

}  // namespace perftune
