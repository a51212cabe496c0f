#pragma once
// NumPy .npy arrays and .npz archives (a zip of .npy files), read and written without Python.
// Reading supports stored and deflated zip entries (zlib), zip64 sizes, .npy format versions 1-3,
// little-endian (or byte-sized) numeric dtypes in C order. Writing produces a stored zip of .npy
// v1 files that numpy.load reads. Formats: NumPy's NEP 1 (.npy) and PKWARE's APPNOTE (zip).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace perftune {

struct NpyArray {
  char kind = 'f';           // 'f' float, 'i' signed, 'u' unsigned, 'b' bool
  int item_size = 4;         // bytes per element
  std::vector<std::int64_t> shape;
  std::vector<char> data;    // little-endian elements, C order

  std::size_t element_count() const;
  std::string descr() const;  // "<f4", "|u1", ...

  // Element i converted to a wider type. Throw std::out_of_range past the end.
  double as_double(std::size_t i) const;
  std::int64_t as_int(std::size_t i) const;  // integer and bool kinds only (else std::logic_error)

  static NpyArray from_floats(const std::vector<float>& values, std::vector<std::int64_t> shape);
  static NpyArray from_ints(const std::vector<std::int64_t>& values, std::vector<std::int64_t> shape, char kind = 'i', int item_size = 8);
};

using Npz = std::map<std::string, NpyArray>;  // by array name (the entry name without ".npy")

// Parses one .npy file's bytes. Throws InputError(file, place, expected) for a bad magic,
// header, dtype (big-endian, structured, object), Fortran order or a size mismatch.
NpyArray parse_npy(const std::string& bytes, const std::string& file, const std::string& place = "");
std::string serialize_npy(const NpyArray& array);

// Reads a .npz archive. Throws InputError naming the file, the entry and what was expected for
// a truncated or corrupt archive, an unsupported compression method, or a CRC mismatch.
Npz read_npz(const std::string& path);
Npz parse_npz(const std::string& bytes, const std::string& file);
// Writes `arrays` as a stored (uncompressed) zip; throws std::runtime_error if it cannot write.
void write_npz(const std::string& path, const Npz& arrays);

}  // namespace perftune
