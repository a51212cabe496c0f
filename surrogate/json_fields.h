#pragma once
// Reading optional integer fields of a hyper-parameter object (configs/models, "train", a
// checkpoint's "params"): each key present must be a positive integer within its field's bound;
// an absent key keeps the field's default. The bound is checked here, at parse time, before any
// size is used to allocate (a checkpoint's "layers": 100000 or a "hidden" of 2^40).
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "ir/json_view.h"

namespace perftune {

struct BoundedIntField {
  const char* key;
  int* field;
  int most;  // the largest value accepted
};

inline void read_bounded_ints(const JsonView& json, std::initializer_list<BoundedIntField> fields) {
  for (const auto& [key, field, most] : fields)
    if (auto v = json.find(key)) {
      const std::int64_t value = v->as_positive_int();
      if (value > most) v->fail("a positive integer of at most " + std::to_string(most) + ", not " + std::to_string(value));
      *field = static_cast<int>(value);
    }
}

// Without a bound of their own, fields are still held to what an int holds (a cast would wrap).
inline void read_positive_ints(const JsonView& json, std::initializer_list<std::pair<const char*, int*>> fields) {
  for (const auto& [key, field] : fields) read_bounded_ints(json, {{key, field, INT_MAX}});
}

// A count >= 0 (as_count) held to `most`; `what` names it in the error.
inline int read_bounded_count(const JsonView& value, int most, const std::string& what) {
  const std::uint64_t count = value.as_count(what);
  if (count > static_cast<std::uint64_t>(most)) value.fail(what + ", at most " + std::to_string(most) + ", not " + std::to_string(count));
  return static_cast<int>(count);
}

}  // namespace perftune
