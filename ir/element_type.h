#pragma once
// Element types, numbered as xla::PrimitiveType so HLO protos map one to one.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace perftune {

enum class ElementType : int {
  kInvalid = 0, kPred = 1, kS8 = 2, kS16 = 3, kS32 = 4, kS64 = 5, kU8 = 6, kU16 = 7, kU32 = 8,
  kU64 = 9, kF16 = 10, kF32 = 11, kF64 = 12, kTuple = 13, kC64 = 15, kBF16 = 16, kToken = 17,
  kC128 = 18,
};

// Lower-case XLA spelling ("f32", "bf16", "pred", ...).
std::string_view element_type_name(ElementType type);
// Inverse of element_type_name; nullopt for an unknown spelling.
std::optional<ElementType> parse_element_type(std::string_view name);
// Numeric value from a proto; nullopt when it is not a known xla::PrimitiveType.
std::optional<ElementType> element_type_from_number(int number);
// Bytes per element (0 for tuple/token/invalid).
int element_type_bytes(ElementType type);
bool is_floating_point(ElementType type);

}  // namespace perftune
