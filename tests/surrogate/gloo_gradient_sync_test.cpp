// Data-parallel training over c10d gloo (two ranks played by threads, real gloo sockets): each rank
// computes its share of a batch and the all-reduce gives every rank the gradients one process
// computes on the whole batch.
#include "surrogate/training/gloo_gradient_sync.h"

#include <thread>

#include "surrogate/gnn/gnn_state.h"
#include "synthetic_kernels.h"
#include "thread_ranks.h"
// After libtorch: c10's logging defines a CHECK of its own, which would replace Catch's.
#include <catch2/catch.hpp>

using namespace perftune;

namespace {

std::vector<torch::Tensor> gradients(GnnCostModel& model) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& p : model.state().members.at(0).model->parameters())
    out.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return out;
}

}  // namespace

TEST_CASE("the all-reduced gradients of two ranks' shares are one process's gradients of the whole batch", "[surrogate][ranks]") {
  const std::vector<MeasuredKernel> kernels = {testing::measured_kernel("k1", 64, 64, 32), testing::measured_kernel("k2", 128, 64, 16),
                                               testing::measured_kernel("k3", 256, 32, 64)};
  const FeatureVocabulary vocabulary = FeatureVocabulary::build(testing::pointers(kernels), 1);
  const GnnParams params = testing::small_gnn_params(32, 16);
  TrainOptions options;
  options.seed = 5;
  Rng rng(3);
  std::vector<GnnCostModel::State::Group> groups;  // k1, k2, k3, k1: rank 0 gets k1 twice, rank 1 k2 and k3
  for (std::size_t i = 0; i < 4; ++i) {
    const MeasuredKernel& k = kernels[i % 3];
    groups.push_back(sample_group(k.kernel, *k.space, k.measurements, 12, rng));
  }

  GnnCostModel alone(params, vocabulary, options);
  const double alone_loss = alone.state().backward(groups, 0);
  const auto expected = gradients(alone);

  // Built in turn (the constructor seeds torch's global generator), so their weights are equal.
  std::vector<std::unique_ptr<GnnCostModel>> ranked;
  for (int r = 0; r < 2; ++r) ranked.push_back(std::make_unique<GnnCostModel>(params, vocabulary, options));
  ThreadWorld world(2);
  double losses[2] = {0, 0};
  std::vector<torch::Tensor> got[2];
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      const auto sync = gloo_gradient_sync(world.rank(r));
      ranked[r]->state().options.gradient_sync = sync.get();
      losses[r] = ranked[r]->state().backward(groups, 0);
      got[r] = gradients(*ranked[r]);
    });
  for (auto& t : threads) t.join();

  CHECK(losses[0] == Approx(alone_loss).epsilon(1e-5));
  CHECK(losses[1] == losses[0]);
  REQUIRE(got[0].size() == expected.size());
  double largest = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(torch::equal(got[0][i], got[1][i]));  // the same bytes on every rank: the weights stay equal
    CHECK(torch::allclose(got[0][i], expected[i], 1e-4, 1e-6));
    largest = std::max(largest, expected[i].abs().max().item<double>());
  }
  CHECK(largest > 0);  // a batch that moved nothing would prove nothing
}
