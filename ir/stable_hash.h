#pragma once
// A hash of text that is the same on every run, build and machine (std::hash is not), for names
// that must survive a restart: checkpoint file names, program content keys, run identities.
#include <cstdint>
#include <string>
#include <string_view>

namespace perftune {

// 64-bit FNV-1a (offset basis and prime from the FNV reference, isthe.com/chongo/tech/comp/fnv).
std::uint64_t stable_hash(std::string_view text);
// stable_hash as `digits` lowercase hex digits (its low 4 * digits bits), 1 to 16.
std::string stable_hash_hex(std::string_view text, int digits = 16);

}  // namespace perftune
