#include "ir/element_type.h"

#include <array>
#include <utility>

namespace perftune {

namespace {
struct TypeInfo {
  ElementType type;
  std::string_view name;
  int bytes;
};
constexpr std::array<TypeInfo, 18> kTypes{{
    {ElementType::kInvalid, "invalid", 0}, {ElementType::kPred, "pred", 1},
    {ElementType::kS8, "s8", 1},           {ElementType::kS16, "s16", 2},
    {ElementType::kS32, "s32", 4},         {ElementType::kS64, "s64", 8},
    {ElementType::kU8, "u8", 1},           {ElementType::kU16, "u16", 2},
    {ElementType::kU32, "u32", 4},         {ElementType::kU64, "u64", 8},
    {ElementType::kF16, "f16", 2},         {ElementType::kF32, "f32", 4},
    {ElementType::kF64, "f64", 8},         {ElementType::kTuple, "tuple", 0},
    {ElementType::kC64, "c64", 8},         {ElementType::kBF16, "bf16", 2},
    {ElementType::kToken, "token", 0},     {ElementType::kC128, "c128", 16},
}};

const TypeInfo* find(ElementType type) {
  for (const auto& info : kTypes)
    if (info.type == type) return &info;
  return nullptr;
}
}  // namespace

std::string_view element_type_name(ElementType type) {
  const TypeInfo* info = find(type);
  return info ? info->name : "invalid";
}

std::optional<ElementType> parse_element_type(std::string_view name) {
  for (const auto& info : kTypes)
    if (info.name == name) return info.type;
  return std::nullopt;
}

std::optional<ElementType> element_type_from_number(int number) {
  for (const auto& info : kTypes)
    if (static_cast<int>(info.type) == number) return info.type;
  return std::nullopt;
}

int element_type_bytes(ElementType type) {
  const TypeInfo* info = find(type);
  return info ? info->bytes : 0;
}

bool is_floating_point(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kF32 || type == ElementType::kF64 ||
         type == ElementType::kBF16;
}

}  // namespace perftune
