#include "ir/npz.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

#include "ir/file_io.h"
#include "ir/input_error.h"

namespace perftune {

namespace {

// Zip record signatures and sizes (PKWARE APPNOTE.TXT, sections 4.3.7, 4.3.12, 4.3.14-4.3.16).
constexpr std::uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEndOfCentral = 0x06054b50,
                        kZip64End = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr std::size_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndOfCentralSize = 22, kZip64LocatorSize = 20;
constexpr std::uint16_t kZip64ExtraId = 0x0001;
constexpr std::uint32_t kZip64Marker = 0xFFFFFFFF;
constexpr int kStored = 0, kDeflated = 8;
// .npy magic (NEP 1): "\x93NUMPY", then major and minor version bytes.
constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr std::size_t kNpyMagicSize = 6;
// numpy pads the header so the data starts on a 64-byte boundary (numpy/lib/format.py ARRAY_ALIGN).
constexpr std::size_t kNpyAlign = 64;

std::uint64_t read_le(const std::string& bytes, std::size_t at, int size) {
  std::uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
  return v;
}

void write_le(std::string& out, std::uint64_t v, int size) {
  for (int i = 0; i < size; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

struct Entry {
  std::string name;
  int method = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed = 0, uncompressed = 0, local_offset = 0;
};

// Reads little-endian fields of one record, failing with the record's name when it runs off the end.
class Reader {
 public:
  Reader(const std::string& bytes, std::string file) : bytes_(bytes), file_(std::move(file)) {}
  void need(std::size_t at, std::size_t size, const std::string& what) const {
    if (at > bytes_.size() || size > bytes_.size() - at)
      throw InputError(file_, "byte " + std::to_string(at), "a complete " + what + ", but the file ends early (truncated archive)");
  }
  std::uint64_t u(std::size_t at, int size) const { return read_le(bytes_, at, size); }
  const std::string& file() const { return file_; }
  const std::string& bytes() const { return bytes_; }

 private:
  const std::string& bytes_;
  std::string file_;
};

std::vector<Entry> central_directory(const Reader& r) {
  const std::string& bytes = r.bytes();
  if (bytes.size() < kEndOfCentralSize) r.need(0, kEndOfCentralSize, "zip archive (end of central directory record)");
  // The end record sits at the end, followed only by a comment of at most 65535 bytes.
  std::size_t end = std::string::npos;
  const std::size_t lowest = bytes.size() > kEndOfCentralSize + 0xFFFF ? bytes.size() - kEndOfCentralSize - 0xFFFF : 0;
  for (std::size_t at = bytes.size() - kEndOfCentralSize + 1; at-- > lowest;)
    if (r.u(at, 4) == kEndOfCentral) {
      end = at;
      break;
    }
  if (end == std::string::npos)
    throw InputError(r.file(), "end of file", "a zip archive's end-of-central-directory record (the file is truncated or not an .npz)");
  std::uint64_t count = r.u(end + 10, 2), cd_size = r.u(end + 12, 4), cd_offset = r.u(end + 16, 4);
  if ((count == 0xFFFF || cd_size == kZip64Marker || cd_offset == kZip64Marker) && end >= kZip64LocatorSize &&
      r.u(end - kZip64LocatorSize, 4) == kZip64Locator) {
    const std::uint64_t z = r.u(end - kZip64LocatorSize + 8, 8);
    r.need(z, 56, "zip64 end of central directory record");
    if (r.u(z, 4) != kZip64End) throw InputError(r.file(), "byte " + std::to_string(z), "a zip64 end of central directory record");
    count = r.u(z + 32, 8);
    cd_size = r.u(z + 40, 8);
    cd_offset = r.u(z + 48, 8);
  }
  r.need(cd_offset, cd_size, "central directory");
  std::vector<Entry> entries;
  std::size_t at = cd_offset;
  for (std::uint64_t i = 0; i < count; ++i) {
    r.need(at, kCentralHeaderSize, "central directory entry " + std::to_string(i));
    if (r.u(at, 4) != kCentralHeader)
      throw InputError(r.file(), "byte " + std::to_string(at), "central directory entry " + std::to_string(i) + " (signature PK\\1\\2)");
    Entry e;
    e.method = static_cast<int>(r.u(at + 10, 2));
    e.crc = static_cast<std::uint32_t>(r.u(at + 16, 4));
    e.compressed = r.u(at + 20, 4);
    e.uncompressed = r.u(at + 24, 4);
    const std::size_t name_len = r.u(at + 28, 2), extra_len = r.u(at + 30, 2), comment_len = r.u(at + 32, 2);
    e.local_offset = r.u(at + 42, 4);
    r.need(at + kCentralHeaderSize, name_len + extra_len + comment_len, "central directory entry " + std::to_string(i));
    e.name = bytes.substr(at + kCentralHeaderSize, name_len);
    // Zip64 sizes live in an extra field, in this order, for the fields set to the marker.
    for (std::size_t x = at + kCentralHeaderSize + name_len; x + 4 <= at + kCentralHeaderSize + name_len + extra_len;) {
      const std::uint64_t id = r.u(x, 2), size = r.u(x + 2, 2);
      std::size_t f = x + 4;
      if (id == kZip64ExtraId) {
        if (e.uncompressed == kZip64Marker && f + 8 <= x + 4 + size) e.uncompressed = r.u(f, 8), f += 8;
        if (e.compressed == kZip64Marker && f + 8 <= x + 4 + size) e.compressed = r.u(f, 8), f += 8;
        if (e.local_offset == kZip64Marker && f + 8 <= x + 4 + size) e.local_offset = r.u(f, 8);
      }
      x += 4 + size;
    }
    entries.push_back(std::move(e));
    at += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
  return entries;
}

std::string entry_bytes(const Reader& r, const Entry& e) {
  const std::string place = "entry '" + e.name + "'";
  r.need(e.local_offset, kLocalHeaderSize, "local header of " + place);
  if (r.u(e.local_offset, 4) != kLocalHeader)
    throw InputError(r.file(), place + " at byte " + std::to_string(e.local_offset), "a local file header (signature PK\\3\\4)");
  const std::size_t data = e.local_offset + kLocalHeaderSize + r.u(e.local_offset + 26, 2) + r.u(e.local_offset + 28, 2);
  r.need(data, e.compressed, "data of " + place);
  // Deflate expands at most 1032:1 (zlib's technical details); a larger claim is corrupt and
  // must not make us allocate it.
  constexpr std::uint64_t kMaxDeflateRatio = 1032;
  if ((e.method == kStored && e.uncompressed != e.compressed) ||
      (e.method == kDeflated && e.uncompressed > e.compressed * kMaxDeflateRatio + 1024))
    throw InputError(r.file(), place, "an uncompressed size that its " + std::to_string(e.compressed) +
                                          " compressed bytes can hold, not " + std::to_string(e.uncompressed));
  std::string out;
  if (e.method == kStored) {
    out = r.bytes().substr(data, e.compressed);
  } else if (e.method == kDeflated) {
    out.resize(e.uncompressed);
    z_stream z{};
    if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw std::runtime_error("zlib: inflateInit2 failed");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(r.bytes().data() + data));
    z.avail_in = static_cast<uInt>(e.compressed);
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int status = inflate(&z, Z_FINISH);
    const auto produced = z.total_out;
    inflateEnd(&z);
    if (status != Z_STREAM_END || produced != e.uncompressed)
      throw InputError(r.file(), place, "a complete deflate stream of " + std::to_string(e.uncompressed) + " bytes (corrupt or truncated)");
  } else {
    throw InputError(r.file(), place, "compression method 0 (stored) or 8 (deflate), not " + std::to_string(e.method));
  }
  if (out.size() != e.uncompressed)
    throw InputError(r.file(), place, std::to_string(e.uncompressed) + " bytes of data, found " + std::to_string(out.size()));
  const auto crc = static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(out.data()), static_cast<uInt>(out.size())));
  if (crc != e.crc) throw InputError(r.file(), place, "data matching its CRC-32 (the archive is corrupt)");
  return out;
}

// Value of `key` in numpy's header dict literal, up to the next top-level comma or closing brace.
std::string header_value(const std::string& header, const std::string& key, const std::string& file, const std::string& place) {
  const std::string quoted = "'" + key + "'";
  auto at = header.find(quoted);
  if (at == std::string::npos) throw InputError(file, place, "an .npy header with key " + quoted);
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) throw InputError(file, place, "a ':' after " + quoted + " in the .npy header");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  std::size_t end = at;
  int depth = 0;
  while (end < header.size() && !(depth == 0 && (header[end] == ',' || header[end] == '}'))) {
    if (header[end] == '(') ++depth;
    if (header[end] == ')') --depth;
    ++end;
  }
  return header.substr(at, end - at);
}

}  // namespace

std::size_t NpyArray::element_count() const {
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

std::string NpyArray::descr() const { return std::string(item_size == 1 ? "|" : "<") + kind + std::to_string(item_size); }

double NpyArray::as_double(std::size_t i) const {
  if (i >= element_count()) throw std::out_of_range("NpyArray index out of range");
  const char* p = data.data() + i * static_cast<std::size_t>(item_size);
  if (kind == 'f') {
    if (item_size == 4) { float f; std::memcpy(&f, p, 4); return f; }
    double d; std::memcpy(&d, p, 8); return d;
  }
  return static_cast<double>(as_int(i));
}

std::int64_t NpyArray::as_int(std::size_t i) const {
  if (i >= element_count()) throw std::out_of_range("NpyArray index out of range");
  if (kind == 'f') throw std::logic_error("NpyArray::as_int on a float array");
  const std::uint64_t raw = read_le(std::string(data.data() + i * static_cast<std::size_t>(item_size), static_cast<std::size_t>(item_size)), 0, item_size);
  if (kind == 'i' && item_size < 8 && (raw >> (8 * item_size - 1)) & 1) return static_cast<std::int64_t>(raw | (~0ULL << (8 * item_size)));
  return static_cast<std::int64_t>(raw);
}

NpyArray NpyArray::from_floats(const std::vector<float>& values, std::vector<std::int64_t> shape) {
  NpyArray a{'f', 4, std::move(shape), {}};
  if (a.element_count() != values.size()) throw std::invalid_argument("NpyArray::from_floats: shape does not match the values");
  a.data.resize(values.size() * 4);
  // memcpy from an empty vector's null data() is undefined even for 0 bytes (UBSan found it).
  if (!values.empty()) std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

NpyArray NpyArray::from_ints(const std::vector<std::int64_t>& values, std::vector<std::int64_t> shape, char kind, int item_size) {
  NpyArray a{kind, item_size, std::move(shape), {}};
  if (a.element_count() != values.size()) throw std::invalid_argument("NpyArray::from_ints: shape does not match the values");
  std::string bytes;
  for (std::int64_t v : values) write_le(bytes, static_cast<std::uint64_t>(v), item_size);
  a.data.assign(bytes.begin(), bytes.end());
  return a;
}

NpyArray parse_npy(const std::string& bytes, const std::string& file, const std::string& place) {
  if (bytes.size() < kNpyMagicSize + 4 || bytes.compare(0, kNpyMagicSize, kNpyMagic) != 0)
    throw InputError(file, place, "an .npy array (magic \\x93NUMPY)");
  const int major = static_cast<unsigned char>(bytes[6]);
  if (major < 1 || major > 3) throw InputError(file, place, ".npy format version 1, 2 or 3, not " + std::to_string(major));
  const std::size_t len_size = major == 1 ? 2 : 4;
  const std::size_t header_at = 8 + len_size;
  if (bytes.size() < header_at) throw InputError(file, place, "a complete .npy header length (truncated)");
  const std::size_t header_len = read_le(bytes, 8, static_cast<int>(len_size));
  if (header_len > bytes.size() - header_at) throw InputError(file, place, "a complete .npy header (truncated)");
  const std::string header = bytes.substr(header_at, header_len);

  NpyArray a;
  const std::string descr = header_value(header, "descr", file, place);
  if (descr.size() < 4 || descr.front() != '\'' || descr.back() != '\'')
    throw InputError(file, place, "a simple numeric dtype such as '<f4', not " + descr);
  const char order = descr[1];
  a.kind = descr[2];
  try {
    a.item_size = std::stoi(descr.substr(3, descr.size() - 4));
  } catch (const std::exception&) {
    throw InputError(file, place, "a dtype with an item size, not " + descr);
  }
  const bool known = (a.kind == 'f' && (a.item_size == 4 || a.item_size == 8)) ||
                     ((a.kind == 'i' || a.kind == 'u') && (a.item_size == 1 || a.item_size == 2 || a.item_size == 4 || a.item_size == 8)) ||
                     (a.kind == 'b' && a.item_size == 1);
  if (!known) throw InputError(file, place, "a float32/64, (u)int8-64 or bool dtype, not " + descr);
  if (order == '>' && a.item_size > 1) throw InputError(file, place, "a little-endian dtype, not " + descr);
  if (header_value(header, "fortran_order", file, place) != "False")
    throw InputError(file, place, "a C-order array (fortran_order False)");
  const std::string shape = header_value(header, "shape", file, place);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') throw InputError(file, place, "a shape tuple, not " + shape);
  std::size_t at = 1;
  while (at < shape.size() - 1) {
    while (at < shape.size() - 1 && (shape[at] == ' ' || shape[at] == ',')) ++at;
    if (at >= shape.size() - 1) break;
    std::size_t used = 0;
    try {
      a.shape.push_back(std::stoll(shape.substr(at), &used));
    } catch (const std::exception&) {
      throw InputError(file, place, "a shape of non-negative integers, not " + shape);
    }
    if (a.shape.back() < 0) throw InputError(file, place, "a shape of non-negative integers, not " + shape);
    at += used;
  }
  // The byte count must fit: a shape whose product overflows cannot describe the data.
  std::size_t expected = static_cast<std::size_t>(a.item_size);
  for (std::int64_t d : a.shape)
    if (d != 0 && expected > (bytes.size() + 1) / static_cast<std::size_t>(d)) {
      expected = bytes.size() + 1;  // more than the file holds
      break;
    } else {
      expected *= static_cast<std::size_t>(d);
    }
  const std::size_t data_at = header_at + header_len;
  if (bytes.size() - data_at != expected)
    throw InputError(file, place, std::to_string(expected) + " bytes of data for shape " + shape + " and dtype " + descr + ", found " +
                                      std::to_string(bytes.size() - data_at));
  a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_at), bytes.end());
  return a;
}

std::string serialize_npy(const NpyArray& a) {
  std::string shape = "(";
  for (std::size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : i + 1 < a.shape.size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + a.descr() + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t preamble = kNpyMagicSize + 2 + 2;
  header.append(kNpyAlign - (preamble + header.size() + 1) % kNpyAlign, ' ');
  header.push_back('\n');
  std::string out(kNpyMagic, kNpyMagicSize);
  out.push_back(1);
  out.push_back(0);
  write_le(out, header.size(), 2);
  out += header;
  out.append(a.data.begin(), a.data.end());
  return out;
}

Npz parse_npz(const std::string& bytes, const std::string& file) {
  const Reader r(bytes, file);
  Npz arrays;
  for (const Entry& e : central_directory(r)) {
    std::string name = e.name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    arrays[name] = parse_npy(entry_bytes(r, e), file, "entry '" + e.name + "'");
  }
  return arrays;
}

Npz read_npz(const std::string& path) { return parse_npz(read_file(path), path); }

void write_npz(const std::string& path, const Npz& arrays) {
  std::string out, central;
  constexpr std::uint16_t kVersion = 20;     // 2.0: deflate-era readers accept it (APPNOTE 4.4.3)
  constexpr std::uint16_t kDosDate = 0x21;   // 1980-01-01, the earliest DOS date
  std::size_t count = 0;
  for (const auto& [name, array] : arrays) {
    const std::string entry = name + ".npy";
    const std::string data = serialize_npy(array);
    const auto crc = static_cast<std::uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    if (data.size() >= kZip64Marker || out.size() >= kZip64Marker) throw std::runtime_error("write_npz: arrays over 4 GiB are not supported");
    const std::size_t offset = out.size();
    auto common = [&](std::string& s) {
      write_le(s, kVersion, 2);
      write_le(s, 0, 2);  // flags
      write_le(s, kStored, 2);
      write_le(s, 0, 2);  // time
      write_le(s, kDosDate, 2);
      write_le(s, crc, 4);
      write_le(s, data.size(), 4);
      write_le(s, data.size(), 4);
      write_le(s, entry.size(), 2);
      write_le(s, 0, 2);  // extra length
    };
    write_le(out, kLocalHeader, 4);
    common(out);
    out += entry;
    out += data;
    write_le(central, kCentralHeader, 4);
    write_le(central, kVersion, 2);  // made by
    common(central);
    write_le(central, 0, 2);  // comment length
    write_le(central, 0, 2);  // disk
    write_le(central, 0, 2);  // internal attributes
    write_le(central, 0, 4);  // external attributes
    write_le(central, offset, 4);
    central += entry;
    ++count;
  }
  const std::size_t cd_offset = out.size();
  out += central;
  write_le(out, kEndOfCentral, 4);
  write_le(out, 0, 2);
  write_le(out, 0, 2);
  write_le(out, count, 2);
  write_le(out, count, 2);
  write_le(out, central.size(), 4);
  write_le(out, cd_offset, 4);
  write_le(out, 0, 2);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file.write(out.data(), static_cast<std::streamsize>(out.size())) || !file.flush())
    throw std::runtime_error("cannot write " + path);
}

}  // namespace perftune
