// Pooling and reductions: MaxPool and AveragePool as the IR's reduce-window (padding reads the
// reduction's identity; ceil_mode extends the high padding so the last window fits), the average's
// divisor as a constant per output position, and the Reduce* ops and global pools as reduce.
#include <cmath>
#include <numeric>

#include "frontend/node_context.h"
#include "frontend/reductions.h"

namespace perftune::frontend {

namespace {

struct PoolGeometry {
  Window window;        // over every dimension: 1 for batch and channel
  Dims user_pad_low;    // the pads the model asked for, per spatial dimension
  Dims user_pad_high;   // (the window's high padding may add ceil_mode's)
  Dims out_spatial;
};

PoolGeometry pool_geometry(NodeContext& c, const Dims& in) {
  const std::size_t n = in.size() - 2;
  const Dims kernel = c.attribute_ints("kernel_shape", {});
  if (kernel.size() != n) c.fail("'kernel_shape' with one entry per spatial dimension");
  const Dims strides = c.attribute_ints("strides", Dims(n, 1)), dilations = c.attribute_ints("dilations", Dims(n, 1));
  if (strides.size() != n || dilations.size() != n) c.fail("one stride and one dilation per spatial dimension");
  const std::string auto_pad = c.attribute_string("auto_pad", "NOTSET");
  const bool ceil_mode = c.attribute_int("ceil_mode", 0) != 0;
  PoolGeometry g;
  g.window.size = Dims{1, 1};
  g.window.stride = Dims{1, 1};
  g.window.window_dilation = Dims{1, 1};
  g.window.pad_low = g.window.pad_high = Dims{0, 0};
  const Dims pads = c.attribute_ints("pads", Dims(2 * n, 0));
  if (pads.size() != 2 * n) c.fail("'pads' with " + std::to_string(2 * n) + " entries (begins, then ends)");
  for (std::size_t s = 0; s < n; ++s) {
    if (kernel[s] < 1 || strides[s] < 1 || dilations[s] < 1) c.fail("kernel sizes, strides and dilations of at least 1");
    const std::int64_t reach = (kernel[s] - 1) * dilations[s] + 1, size = in[2 + s];
    std::int64_t low = 0, high = 0, out = 0;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (size + strides[s] - 1) / strides[s];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * strides[s] + reach - size);
      low = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      high = total - low;
    } else if (auto_pad == "VALID") {
      if (size < reach) c.fail("a window no larger than its input");
      out = (size - reach) / strides[s] + 1;
    } else if (auto_pad == "NOTSET") {
      low = pads[s];
      high = pads[n + s];
      if (low < 0 || high < 0) c.fail("non-negative pads");
      const std::int64_t span = size + low + high - reach;
      if (span < 0) c.fail("a window no larger than its padded input");
      out = (ceil_mode ? (span + strides[s] - 1) / strides[s] : span / strides[s]) + 1;
    } else {
      c.fail("auto_pad NOTSET, SAME_UPPER, SAME_LOWER or VALID, found '" + auto_pad + "'");
    }
    g.user_pad_low.push_back(low);
    g.user_pad_high.push_back(high);
    g.out_spatial.push_back(out);
    g.window.size.push_back(kernel[s]);
    g.window.stride.push_back(strides[s]);
    g.window.window_dilation.push_back(dilations[s]);
    g.window.pad_low.push_back(low);
    g.window.pad_high.push_back(std::max(high, (out - 1) * strides[s] + reach - size - low));
  }
  return g;
}

void max_pool(NodeContext& c) {
  c.expect_attributes({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"});
  c.only_first_output();
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0);
  if (b.dims(x).size() < 3) c.fail("an input of rank 3 or more (N, C, spatial...)");
  c.set_output(0, b.reduce_window(c.hint(), x, pool_geometry(c, b.dims(x)).window, "maximum"));
}

void average_pool(NodeContext& c) {
  c.expect_attributes({"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides", "dilations"});
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0);
  const Dims in = b.dims(x);
  if (in.size() < 3) c.fail("an input of rank 3 or more (N, C, spatial...)");
  const PoolGeometry g = pool_geometry(c, in);
  const bool include_pad = c.attribute_int("count_include_pad", 0) != 0;
  const OpId sum = b.reduce_window(c.hint(".sum"), x, g.window, "add");
  // Elements each window averages, per spatial dimension: those inside the input, or inside the
  // input and the model's own pads with count_include_pad (never ceil_mode's extra reach).
  const std::size_t n = g.out_spatial.size();
  std::vector<Dims> counts(n);
  for (std::size_t s = 0; s < n; ++s) {
    const std::int64_t lo = include_pad ? -g.user_pad_low[s] : 0, hi = in[2 + s] + (include_pad ? g.user_pad_high[s] : 0);
    for (std::int64_t o = 0; o < g.out_spatial[s]; ++o) {
      std::int64_t k = 0;
      for (std::int64_t w = 0; w < g.window.size[2 + s]; ++w) {
        const std::int64_t at = o * g.window.stride[2 + s] - g.window.pad_low[2 + s] + w * g.window.window_dilation[2 + s];
        k += at >= lo && at < hi ? 1 : 0;
      }
      counts[s].push_back(std::max<std::int64_t>(k, 1));
    }
  }
  auto divisor = std::make_shared<Literal>(static_cast<std::size_t>(element_count(g.out_spatial)), 1.0f);
  for (std::size_t i = 0; i < divisor->size(); ++i) {
    std::size_t rest = i;
    float product = 1.0f;
    for (std::size_t s = n; s-- > 0;) {
      product *= static_cast<float>(counts[s][rest % static_cast<std::size_t>(g.out_spatial[s])]);
      rest /= static_cast<std::size_t>(g.out_spatial[s]);
    }
    (*divisor)[i] = product;
  }
  const bool uniform = std::all_of(divisor->begin(), divisor->end(), [&](float v) { return v == divisor->front(); });
  const OpId count = uniform ? b.scalar(c.hint(".count"), divisor->front()) : b.constant(c.hint(".count"), g.out_spatial, divisor);
  c.set_output(0, b.binary(c.hint(), "divide", sum, count));
}

void global_pool(NodeContext& c, bool average) {
  c.expect_attributes({});
  ProgramBuilder& b = c.builder();
  const OpId x = c.value(0);
  const Dims dims = b.dims(x);
  if (dims.size() < 3) c.fail("an input of rank 3 or more (N, C, spatial...)");
  Dims axes(dims.size() - 2);
  std::iota(axes.begin(), axes.end(), 2);
  if (average) c.set_output(0, mean_over(b, c.hint(), x, axes));
  else c.set_output(0, keep_dims(b, c.hint(), b.reduce(c.hint(".max"), x, axes, "maximum"), dims, axes));
}

Translation reduction(const std::string& combine, bool mean) {
  return [combine, mean](NodeContext& c) {
    c.expect_attributes({"axes", "keepdims", "noop_with_empty_axes"});
    ProgramBuilder& b = c.builder();
    const OpId x = c.value(0);
    const Dims dims = b.dims(x);
    Dims given = c.attribute_ints("axes", {});
    if (c.present(1)) given = c.constant(1).ints();
    Dims axes;
    for (std::int64_t a : given) axes.push_back(c.axis(a, dims.size()));
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("axes without repeats");
    if (axes.empty()) {
      if (c.attribute_int("noop_with_empty_axes", 0) != 0) {
        c.set_output(0, b.elementwise(c.hint(), "copy", {x}));
        return;
      }
      axes.resize(dims.size());
      std::iota(axes.begin(), axes.end(), 0);
    }
    const bool keep = c.attribute_int("keepdims", 1) != 0;
    if (mean) {
      const OpId kept = mean_over(b, keep ? c.hint() : c.hint(".kept"), x, axes);
      Dims reduced;
      for (std::size_t d = 0; d < dims.size(); ++d)
        if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d))) reduced.push_back(dims[d]);
      c.set_output(0, keep ? kept : b.reshape(c.hint(), kept, reduced));
      return;
    }
    const OpId reduced = b.reduce(keep ? c.hint(".reduced") : c.hint(), x, axes, combine);
    c.set_output(0, keep ? keep_dims(b, c.hint(), reduced, dims, axes) : reduced);
  };
}

}  // namespace

void add_pooling_ops(TranslationTable& t) {
  t["MaxPool"] = max_pool;
  t["AveragePool"] = average_pool;
  t["GlobalAveragePool"] = [](NodeContext& c) { global_pool(c, true); };
  t["GlobalMaxPool"] = [](NodeContext& c) { global_pool(c, false); };
  t["ReduceMean"] = reduction("add", true);
  t["ReduceSum"] = reduction("add", false);
  t["ReduceMax"] = reduction("maximum", false);
  t["ReduceMin"] = reduction("minimum", false);
  t["ReduceProd"] = reduction("multiply", false);
}

}  // namespace perftune::frontend
