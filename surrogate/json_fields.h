#pragma once
// Reading optional integer fields of a hyper-parameter object (configs/models, "train"): each key
// present must be a positive integer; an absent key keeps the field's default.
#include <initializer_list>
#include <utility>

#include "ir/json_view.h"

namespace perftune {

inline void read_positive_ints(const JsonView& json, std::initializer_list<std::pair<const char*, int*>> fields) {
  for (const auto& [key, field] : fields)
    if (auto v = json.find(key)) *field = static_cast<int>(v->as_positive_int());
}

}  // namespace perftune
