#include "ir/tpugraphs_npz.h"

#include <cmath>
#include <filesystem>

#include "ir/input_error.h"
#include "ir/knob_roles.h"

namespace perftune {

namespace {

// TpuGraphs' opcode ids (tpu_graphs/process_data/xla/hlo_opcode.h, LEARNED_HLO_OPCODE_LIST and
// the tombstones 97 "trace" and 101 "tuple-select"); id 0 is reserved for unknown opcodes.
constexpr std::pair<int, const char*> kOpcodes[] = {
    {1, "abs"}, {2, "add"}, {3, "add-dependency"}, {4, "after-all"}, {5, "all-reduce"}, {6, "all-to-all"},
    {7, "atan2"}, {8, "batch-norm-grad"}, {9, "batch-norm-inference"}, {10, "batch-norm-training"},
    {11, "bitcast"}, {12, "bitcast-convert"}, {13, "broadcast"}, {14, "call"}, {15, "ceil"}, {16, "cholesky"},
    {17, "clamp"}, {18, "collective-permute"}, {19, "count-leading-zeros"}, {20, "compare"}, {21, "complex"},
    {22, "concatenate"}, {23, "conditional"}, {24, "constant"}, {25, "convert"}, {26, "convolution"},
    {27, "copy"}, {28, "copy-done"}, {29, "copy-start"}, {30, "cosine"}, {31, "custom-call"}, {32, "divide"},
    {33, "domain"}, {34, "dot"}, {35, "dynamic-slice"}, {36, "dynamic-update-slice"}, {37, "exponential"},
    {38, "exponential-minus-one"}, {39, "fft"}, {40, "floor"}, {41, "fusion"}, {42, "gather"},
    {43, "get-dimension-size"}, {44, "set-dimension-size"}, {45, "get-tuple-element"}, {46, "imag"},
    {47, "infeed"}, {48, "iota"}, {49, "is-finite"}, {50, "log"}, {51, "log-plus-one"}, {52, "and"},
    {53, "not"}, {54, "or"}, {55, "xor"}, {56, "map"}, {57, "maximum"}, {58, "minimum"}, {59, "multiply"},
    {60, "negate"}, {61, "outfeed"}, {62, "pad"}, {63, "parameter"}, {64, "partition-id"}, {65, "popcnt"},
    {66, "power"}, {67, "real"}, {68, "recv"}, {69, "recv-done"}, {70, "reduce"}, {71, "reduce-precision"},
    {72, "reduce-window"}, {73, "remainder"}, {74, "replica-id"}, {75, "reshape"}, {76, "reverse"},
    {77, "rng"}, {78, "rng-get-and-update-state"}, {79, "rng-bit-generator"}, {80, "round-nearest-afz"},
    {81, "rsqrt"}, {82, "scatter"}, {83, "select"}, {84, "select-and-scatter"}, {85, "send"},
    {86, "send-done"}, {87, "shift-left"}, {88, "shift-right-arithmetic"}, {89, "shift-right-logical"},
    {90, "sign"}, {91, "sine"}, {92, "slice"}, {93, "sort"}, {94, "sqrt"}, {95, "subtract"}, {96, "tanh"},
    {97, "trace"}, {98, "transpose"}, {99, "triangular-solve"}, {100, "tuple"}, {101, "tuple-select"},
    {102, "while"}, {103, "cbrt"}, {104, "all-gather"}, {105, "collective-permute-start"},
    {106, "collective-permute-done"}, {107, "logistic"}, {108, "dynamic-reshape"}, {109, "all-reduce-start"},
    {110, "all-reduce-done"}, {111, "reduce-scatter"}, {112, "all-gather-start"}, {113, "all-gather-done"},
    {114, "opt-barrier"}, {115, "async-start"}, {116, "async-update"}, {117, "async-done"},
    {118, "round-nearest-even"}, {119, "stochastic-convert"}, {120, "tan"},
};

// Node feature columns (TpuGraphs README, "Node Features").
constexpr std::size_t kIsRoot = 0, kElementTypeFirst = 2, kDimsFirst = 21, kParameterNumber = 30, kWindowSize = 37,
                      kWindowStride = 45, kPadLow = 53, kPadHigh = 61, kWindowDilation = 69, kBaseDilation = 77,
                      kMinorToMajor = 134, kMaxRank = 6;
// Element types in one-hot order, columns 2-20 (opaque, column 19, has no perftune type).
constexpr ElementType kOneHotTypes[] = {
    ElementType::kInvalid, ElementType::kPred, ElementType::kS8, ElementType::kS16, ElementType::kS32,
    ElementType::kS64, ElementType::kU8, ElementType::kU16, ElementType::kU32, ElementType::kU64,
    ElementType::kF16, ElementType::kF32, ElementType::kF64, ElementType::kBF16, ElementType::kC64,
    ElementType::kC128, ElementType::kTuple, ElementType::kInvalid, ElementType::kToken};
// Config feature columns (TpuGraphs README, "Tile Config Features"): three groups of six bounds.
constexpr std::size_t kKernelBounds = 0, kOutputBounds = 8, kInputBounds = 16;

// A feature value as an integer; throws InputError for NaN, infinities and values beyond int64
// (a float-to-integer cast of those is undefined behaviour).
std::int64_t to_int(double v, const std::string& file, const std::string& place) {
  constexpr double kLimit = 9.2e18;  // just below 2^63
  if (!std::isfinite(v) || std::fabs(v) > kLimit) throw InputError(file, place, "a finite integral feature value");
  return static_cast<std::int64_t>(std::llround(v));
}

const NpyArray& require(const Npz& arrays, const std::string& name, const std::string& file, std::size_t rank,
                        const std::string& kinds) {
  const auto it = arrays.find(name);
  if (it == arrays.end()) throw InputError(file, "array '" + name + "'", "a TpuGraphs tile array named " + name);
  const NpyArray& a = it->second;
  if (a.shape.size() != rank)
    throw InputError(file, "array '" + name + "'", "an array of rank " + std::to_string(rank) + ", not " + std::to_string(a.shape.size()));
  if (kinds.find(a.kind) == std::string::npos)
    throw InputError(file, "array '" + name + "'", std::string(kinds == "f" ? "a float" : "an integer") + " dtype, not " + a.descr());
  return a;
}

std::string node_place(std::size_t row, std::size_t column) {
  return "node_feat row " + std::to_string(row) + ", column " + std::to_string(column);
}

// The leading non-zero values of a zero-padded group of columns (dims, window sizes).
std::vector<std::int64_t> leading_nonzero(const NpyArray& feat, std::size_t row, std::size_t first, const std::string& file) {
  std::vector<std::int64_t> dims;
  for (std::size_t k = 0; k < kMaxRank; ++k) {
    const double v = feat.as_double(row * kTpuGraphsNodeFeatures + first + k);
    if (v == 0) break;
    dims.push_back(to_int(v, file, node_place(row, first + k)));
    if (auto problem = dimension_problem(dims.back())) throw InputError(file, node_place(row, first + k), *problem);
  }
  return dims;
}

std::vector<std::int64_t> columns(const NpyArray& feat, std::size_t row, std::size_t first, std::size_t count, const std::string& file) {
  std::vector<std::int64_t> values;
  for (std::size_t k = 0; k < count; ++k)
    values.push_back(to_int(feat.as_double(row * kTpuGraphsNodeFeatures + first + k), file, node_place(row, first + k)));
  return values;
}

Op node_op(const NpyArray& feat, std::size_t u, std::int64_t opcode, const std::string& file) {
  constexpr std::size_t w = kTpuGraphsNodeFeatures;
  Op op;
  op.name = "node." + std::to_string(u);
  op.opcode = tpugraphs_opcode_name(opcode);
  for (std::size_t t = 0; t < std::size(kOneHotTypes); ++t)
    if (feat.as_double(u * w + kElementTypeFirst + t) != 0) {
      if (kOneHotTypes[t] == ElementType::kInvalid)
        throw InputError(file, "node_feat row " + std::to_string(u), "an element type perftune knows (not invalid or opaque)");
      op.shape.element_type = kOneHotTypes[t];
    }
  op.shape.dims = leading_nonzero(feat, u, kDimsFirst, file);
  const auto m2m = columns(feat, u, kMinorToMajor, op.shape.dims.size(), file);
  bool is_default = true;  // row-major {rank-1, ..., 0} is the empty layout
  for (std::size_t k = 0; k < m2m.size(); ++k) is_default &= m2m[k] == static_cast<std::int64_t>(m2m.size() - 1 - k);
  if (!is_default) op.shape.minor_to_major = m2m;
  if (op.is_parameter()) op.parameter_number = to_int(feat.as_double(u * w + kParameterNumber), file, node_place(u, kParameterNumber));
  const auto window = leading_nonzero(feat, u, kWindowSize, file);
  if (!window.empty()) {
    const std::size_t n = window.size();
    op.window = Window{window, columns(feat, u, kWindowStride, n, file), columns(feat, u, kPadLow, n, file),
                       columns(feat, u, kPadHigh, n, file), columns(feat, u, kWindowDilation, n, file),
                       columns(feat, u, kBaseDilation, n, file)};
  }
  return op;
}

}  // namespace

std::string tpugraphs_opcode_name(std::int64_t id) {
  for (const auto& [number, name] : kOpcodes)
    if (number == id) return name;
  return "opcode." + std::to_string(id);
}

std::int64_t tpugraphs_opcode_id(const std::string& name) {
  for (const auto& [number, known] : kOpcodes)
    if (name == known) return number;
  return 0;
}

Corpus tpugraphs_corpus(const Npz& arrays, const std::string& file, const std::string& name) {
  const NpyArray& feat = require(arrays, "node_feat", file, 2, "f");
  const NpyArray& opcode = require(arrays, "node_opcode", file, 1, "iu");
  const NpyArray& edges = require(arrays, "edge_index", file, 2, "iu");
  const NpyArray& config = require(arrays, "config_feat", file, 2, "f");
  const NpyArray& runtime = require(arrays, "config_runtime", file, 1, "iu");
  const NpyArray& normalizer = require(arrays, "config_runtime_normalizers", file, 1, "iu");
  const auto n = static_cast<std::size_t>(feat.shape[0]);
  const auto c = static_cast<std::size_t>(config.shape[0]);
  if (static_cast<std::size_t>(feat.shape[1]) != kTpuGraphsNodeFeatures)
    throw InputError(file, "array 'node_feat'", "140 feature columns, not " + std::to_string(feat.shape[1]));
  if (n == 0) throw InputError(file, "array 'node_feat'", "at least one node");
  if (static_cast<std::size_t>(opcode.shape[0]) != n)
    throw InputError(file, "array 'node_opcode'", std::to_string(n) + " entries (one per node_feat row), not " + std::to_string(opcode.shape[0]));
  if (edges.shape[1] != 2) throw InputError(file, "array 'edge_index'", "2 columns, not " + std::to_string(edges.shape[1]));
  if (static_cast<std::size_t>(config.shape[1]) != kTpuGraphsConfigFeatures)
    throw InputError(file, "array 'config_feat'", "24 feature columns, not " + std::to_string(config.shape[1]));
  if (c == 0) throw InputError(file, "array 'config_feat'", "at least one config (an empty space cannot be tuned)");
  if (static_cast<std::size_t>(runtime.shape[0]) != c || static_cast<std::size_t>(normalizer.shape[0]) != c)
    throw InputError(file, "array 'config_runtime'", std::to_string(c) + " runtimes and normalizers (one per config_feat row)");

  Program body(name);
  for (std::size_t u = 0; u < n; ++u) body.add_op(node_op(feat, u, opcode.as_int(u), file));
  for (std::size_t e = 0; e < static_cast<std::size_t>(edges.shape[0]); ++e) {
    const std::int64_t consumer = edges.as_int(2 * e), producer = edges.as_int(2 * e + 1);
    if (consumer < 0 || producer < 0 || static_cast<std::size_t>(consumer) >= n || static_cast<std::size_t>(producer) >= n)
      throw InputError(file, "edge_index row " + std::to_string(e), "node ids below " + std::to_string(n));
    body.add_operand(static_cast<OpId>(consumer), static_cast<OpId>(producer));
  }
  body.check_acyclic(file);
  OpId root = n - 1;
  for (std::size_t u = 0; u < n; ++u)
    if (feat.as_double(u * kTpuGraphsNodeFeatures + kIsRoot) != 0) root = u;
  body.set_root(root);
  const std::size_t rank = body.op(root).shape.dims.size();

  // Which config columns become knobs: every output bound of the root's rank, and any other
  // bound column some config sets.
  struct Column { std::size_t index; std::string knob; };
  std::vector<Column> used;
  auto any_nonzero = [&](std::size_t col) {
    for (std::size_t j = 0; j < c; ++j)
      if (config.as_double(j * kTpuGraphsConfigFeatures + col) != 0) return true;
    return false;
  };
  for (std::size_t d = 0; d < kMaxRank; ++d)
    if (d < rank || any_nonzero(kOutputBounds + d)) used.push_back({kOutputBounds + d, tile_out_knob(d)});
  for (std::size_t d = 0; d < kMaxRank; ++d)
    if (any_nonzero(kKernelBounds + d)) used.push_back({kKernelBounds + d, "tile.kernel." + std::to_string(d)});
  for (std::size_t d = 0; d < kMaxRank; ++d)
    if (any_nonzero(kInputBounds + d)) used.push_back({kInputBounds + d, "tile.in." + std::to_string(d)});
  if (used.empty()) throw InputError(file, "array 'config_feat'", "tile bounds that vary (every bound column is zero)");

  MeasuredKernel measured{Kernel(name, std::move(body)), nullptr, "tpu", {}, std::nullopt};
  std::vector<Config> configs;
  for (std::size_t j = 0; j < c; ++j) {
    const std::string row = "config " + std::to_string(j);
    Config cfg;
    for (const Column& col : used) {
      const double v = config.as_double(j * kTpuGraphsConfigFeatures + col.index);
      const std::string place = "config_feat row " + std::to_string(j) + ", column " + std::to_string(col.index);
      if (v != std::floor(v)) throw InputError(file, place, "an integral tile bound");
      cfg.values.push_back(to_int(v, file, place));
    }
    const std::int64_t ns = runtime.as_int(j);
    if (ns <= 0) throw InputError(file, "config_runtime[" + std::to_string(j) + "]", "a positive runtime in ns, not " + std::to_string(ns));
    if (normalizer.as_int(j) <= 0)
      throw InputError(file, "config_runtime_normalizers[" + std::to_string(j) + "]", "a positive runtime in ns, not " + std::to_string(normalizer.as_int(j)));
    configs.push_back(cfg);
    measured.measurements.push_back(Measurement{std::move(cfg), MeasureResult::from_repeats({1e-9 * static_cast<double>(ns)}, 1e-9 * static_cast<double>(ns))});
  }
  std::vector<std::string> knobs;
  for (const Column& col : used) knobs.push_back(col.knob);
  measured.space = std::make_shared<SearchSpace>(SearchSpace::recorded(knobs, configs));

  return single_kernel_corpus("tpugraphs-npz", file, std::move(measured));
}

Corpus load_tpugraphs_npz(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0) name.resize(name.size() - 4);
  return tpugraphs_corpus(read_npz(path), path, name);
}

}  // namespace perftune
