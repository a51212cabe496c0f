#include <cstring>

#include <catch2/catch.hpp>

#include "surrogate/features/config_features.h"
#include "surrogate/features/feature_cache.h"
#include "surrogate/features/kernel_features.h"
#include "op_builders.h"
#include "synthetic_kernels.h"

using namespace perftune;

TEST_CASE("kernel features are deterministic and have the schema's width") {
  const auto corpus = testing::synthetic_corpus(4, 7);
  const auto vocabulary = FeatureVocabulary::build(testing::pointers(corpus), 1);
  const auto a = featurize_kernel(corpus[0].kernel, vocabulary);
  const auto b = featurize_kernel(corpus[0].kernel, vocabulary);
  REQUIRE(a == b);
  REQUIRE(a.node_count == 6);
  REQUIRE(a.node_features.size() == 6 * kNodeFeatureWidth);
  REQUIRE(a.edge_producer.size() == 5);
  REQUIRE(a.output_dims == corpus[0].kernel.body().op(corpus[0].kernel.body().root()).shape.dims);
  for (float v : a.node_features) REQUIRE(std::isfinite(v));
}

TEST_CASE("cached features equal freshly computed ones byte for byte") {
  const auto corpus = testing::synthetic_corpus(12, 3);
  const auto vocabulary = FeatureVocabulary::build(testing::pointers(corpus), 1);
  FeatureCache cache(vocabulary);
  std::vector<const Kernel*> kernels;
  for (const auto& k : corpus) kernels.push_back(&k.kernel);
  cache.warm(kernels);  // in parallel
  for (const auto& measured : corpus) {
    CAPTURE(measured.kernel.name());
    const auto cached = cache.get(measured.kernel);
    const auto fresh = featurize_kernel(measured.kernel, vocabulary);
    REQUIRE(cached->node_features.size() == fresh.node_features.size());
    REQUIRE(std::memcmp(cached->node_features.data(), fresh.node_features.data(), fresh.node_features.size() * sizeof(float)) == 0);
    REQUIRE(cached->opcode_ids == fresh.opcode_ids);
    REQUIRE(cached->edge_consumer == fresh.edge_consumer);
  }
}

TEST_CASE("rare and unseen opcodes map to the shared other bucket") {
  std::vector<MeasuredKernel> corpus;
  corpus.push_back(testing::measured_kernel("a", 64, 64, 64));
  corpus.push_back(testing::measured_kernel("b", 128, 64, 64));
  corpus.back().kernel = testing::small_kernel("b", 128, 64, 64, "tanh");
  const auto vocabulary = FeatureVocabulary::build(testing::pointers(corpus), 2);
  CAPTURE(vocabulary.opcodes());
  REQUIRE(vocabulary.opcode_id("dot") > 0);
  REQUIRE(vocabulary.opcode_id("tanh") == 0);         // in one kernel only: rare
  REQUIRE(vocabulary.opcode_id("exponential") == 0);  // in one kernel only: rare
  REQUIRE(vocabulary.opcode_id("all-to-all") == 0);   // never seen
}

TEST_CASE("a kernel without a body is one featureless node") {
  const auto features = featurize_kernel(Kernel::opaque("gemm", "0123456789abcdef"), FeatureVocabulary{});
  REQUIRE(features.node_count == 1);
  REQUIRE(features.opcode_ids == std::vector<std::int64_t>{0});
}

TEST_CASE("vocabulary survives a JSON round trip and rejects clashing slots") {
  const auto corpus = testing::synthetic_corpus(3, 1);
  auto vocabulary = FeatureVocabulary::build(testing::pointers(corpus), 1);
  const SearchSpace generic({{"MWG", {16, 32, 64, 128}}, {"SA", {0, 1}}});
  REQUIRE(vocabulary.extend(corpus[0].kernel, generic, 256));
  const auto json = nlohmann::json::parse(vocabulary.to_json().dump());
  REQUIRE(FeatureVocabulary::from_json(JsonView(json, "v.json")) == vocabulary);
  auto bad = json;
  bad["knobs"]["SA"]["slot"] = bad["knobs"]["MWG"]["slot"];
  REQUIRE_THROWS_WITH(FeatureVocabulary::from_json(JsonView(bad, "v.json")), Catch::Contains("v.json") && Catch::Contains("slot"));
}

TEST_CASE("config features read tiles and generic knobs through the naming convention") {
  const auto measured = testing::measured_kernel("k", 256, 512, 64);
  FeatureVocabulary vocabulary = FeatureVocabulary::build(std::vector<const MeasuredKernel*>{&measured}, 1);
  const auto kernel = featurize_kernel(measured.kernel, vocabulary);
  struct Row { std::int64_t t0, t1; };
  const auto row = GENERATE(Row{8, 8}, Row{32, 256}, Row{256, 8});
  CAPTURE(row.t0, row.t1);
  const ConfigFeaturizer featurizer(kernel, *measured.space, vocabulary);
  std::vector<float> out(kConfigFeatureWidth);
  const std::vector<Config> configs{Config{{row.t0, row.t1}}};
  featurizer.featurize(configs, out);
  REQUIRE(out[0] == 1.0f);  // tile.out.0 present
  REQUIRE(out[1] == Approx(std::log2(1.0 + row.t0) * kLogScale));
  REQUIRE(out[2] == Approx(double(row.t0) / 256));
  REQUIRE(out[5] == Approx(double(row.t1) / 512));
  const double tiles = std::ceil(256.0 / row.t0) * std::ceil(512.0 / row.t1);
  REQUIRE(out[3 * kMaxFeatureRank + 2] == Approx(std::log2(1 + tiles) * kLogScale));

  const SearchSpace generic({{"MWG", {16, 32, 64, 128}}, {"SA", {0, 1}}});
  vocabulary.extend(measured.kernel, generic, 256);
  const ConfigFeaturizer generic_featurizer(kernel, generic, vocabulary);
  const std::vector<Config> generic_configs{Config{{64, 1}}};
  generic_featurizer.featurize(generic_configs, out);
  const std::size_t slot = vocabulary.knob("MWG")->slot;
  const float* mwg = out.data() + kTileFeatureWidth + 3 * slot;
  REQUIRE(mwg[0] == 1.0f);
  REQUIRE(mwg[1] == Approx((std::log2(65.0) - std::log2(17.0)) / (std::log2(129.0) - std::log2(17.0))));
  REQUIRE(mwg[2] == Approx(2.0 / 3.0));
  REQUIRE_THROWS(generic_featurizer.featurize(std::vector<Config>{Config{{64}}}, out));
}

TEST_CASE("config features tell a fused producer inlined from one computed per tile") {
  // The same ops fused, placed two ways: Halide runs them at different speeds, so the model must
  // see the difference (share fused, log count, share inlined, share per tile).
  const auto corpus = testing::synthetic_corpus(1, 7);
  const auto vocabulary = FeatureVocabulary::build(testing::pointers(corpus), 1);
  const auto kernel = featurize_kernel(corpus[0].kernel, vocabulary);
  const SearchSpace space({{tile_out_knob(0), {1, 16}}, {fuse_knob(0), {0, 1, 2}}, {fuse_knob(1), {0, 1, 2}}});
  const ConfigFeaturizer featurizer(kernel, space, vocabulary);
  const std::vector<Config> configs{Config{{16, 1, 1}}, Config{{16, 2, 2}}, Config{{16, 1, 0}}};
  std::vector<float> out(configs.size() * kConfigFeatureWidth);
  featurizer.featurize(configs, out);
  const auto fuse = [&](std::size_t config, std::size_t feature) {
    return out[config * kConfigFeatureWidth + kFuseFeatureOffset + feature];
  };
  CHECK(fuse(0, 0) == 1.0f);
  CHECK(fuse(1, 0) == 1.0f);
  CHECK(fuse(0, 2) == 1.0f);  // inlined
  CHECK(fuse(0, 3) == 0.0f);
  CHECK(fuse(1, 2) == 0.0f);
  CHECK(fuse(1, 3) == 1.0f);  // per tile
  CHECK(fuse(2, 0) == 0.5f);
  CHECK(fuse(2, 2) == 0.5f);
  CHECK(fuse(2, 3) == 0.0f);
}

TEST_CASE("config features give the share of a tile past its last full vector and unrolled block") {
  // A reduction's update runs those points guarded, one at a time: 28 of 16 lanes leaves 12.
  const auto measured = testing::measured_kernel("k", 256, 512, 64);  // output 256 x 512
  const FeatureVocabulary vocabulary = FeatureVocabulary::build(std::vector<const MeasuredKernel*>{&measured}, 1);
  const auto kernel = featurize_kernel(measured.kernel, vocabulary);
  const SearchSpace space({{tile_out_knob(0), {1, 6, 8, 256}},
                           {tile_out_knob(1), {16, 28, 512}},
                           {kVectorKnob, {1, 16, 1024}},
                           {kUnrollKnob, {1, 4}}});
  const ConfigFeaturizer featurizer(kernel, space, vocabulary);
  const std::vector<Config> configs{Config{{8, 16, 16, 4}}, Config{{6, 28, 16, 4}}, Config{{6, 28, 1, 1}},
                                    Config{{256, 28, 1024, 4}}};
  std::vector<float> out(configs.size() * kConfigFeatureWidth);
  featurizer.featurize(configs, out);
  const auto tail = [&](std::size_t config, std::size_t feature) {
    return out[config * kConfigFeatureWidth + kTailFeatureOffset + feature];
  };
  CHECK(tail(0, 0) == 0.0f);
  CHECK(tail(0, 1) == 0.0f);
  CHECK(tail(1, 0) == Approx(12.0 / 28));
  CHECK(tail(1, 1) == Approx(2.0 / 6));
  CHECK(tail(2, 0) == 0.0f);  // scalar code has no vector tail
  CHECK(tail(2, 1) == 0.0f);
  CHECK(tail(3, 0) == 1.0f);  // 1024 lanes clamp to the 512-wide extent, wider than the tile: all of it
  CHECK(tail(3, 1) == 0.0f);

  const SearchSpace tiles_only({{tile_out_knob(1), {28}}});
  const ConfigFeaturizer plain(kernel, tiles_only, vocabulary);
  std::vector<float> row(kConfigFeatureWidth);
  plain.featurize(std::vector<Config>{Config{{28}}}, row);
  CHECK(row[kTailFeatureOffset] == 0.0f);
}

TEST_CASE("a grouped and a dilated convolution are told apart from a dense one of the same shapes") {
  // NCHW [1,16,8,8] -> [1,16,8,8], 3x3, same padding: the kernel tensor is [16, 16/groups, 3, 3].
  const auto conv_features = [](std::int64_t groups, std::int64_t dilation) {
    Program p("conv");
    const OpId in = p.add_op(test::parameter("in", 0, test::f32({1, 16, 8, 8})));
    const OpId k = p.add_op(test::parameter("k", 1, test::f32({16, 16 / groups, 3, 3})));
    Op conv = test::make_op("conv", "convolution", test::f32({1, 16, 8, 8}));
    conv.convolution = ConvolutionDims{0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}};
    conv.convolution->feature_group_count = groups;
    conv.window = Window{{3, 3}, {1, 1}, {dilation, dilation}, {dilation, dilation}, {dilation, dilation}, {1, 1}};
    const OpId root = p.add_op(conv, {in, k});
    const auto features = featurize_kernel(Kernel("conv", std::move(p)), FeatureVocabulary{});
    return std::vector<float>(features.node_features.begin() + static_cast<std::ptrdiff_t>(root * kNodeFeatureWidth),
                              features.node_features.begin() + static_cast<std::ptrdiff_t>((root + 1) * kNodeFeatureWidth));
  };
  const auto dense = conv_features(1, 1), depthwise = conv_features(16, 1), grouped = conv_features(4, 1), dilated = conv_features(1, 2);
  CHECK(depthwise != dense);  // a sixteenth of the work: the FLOP and intensity columns
  CHECK(grouped != dense);
  CHECK(grouped != depthwise);
  CHECK(dilated != dense);  // the dilation flag and the padding
}
