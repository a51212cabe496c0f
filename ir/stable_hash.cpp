#include "ir/stable_hash.h"

#include <stdexcept>

namespace perftune {

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a 64-bit offset basis
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;  // FNV-1a 64-bit prime
  }
  return hash;
}

std::string stable_hash_hex(std::string_view text, int digits) {
  if (digits < 1 || digits > 16) throw std::invalid_argument("stable_hash_hex: 1 to 16 digits");
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t hash = stable_hash(text);
  std::string out(static_cast<std::size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, hash >>= 4) out[static_cast<std::size_t>(i)] = kHex[hash & 0xf];
  return out;
}

}  // namespace perftune
