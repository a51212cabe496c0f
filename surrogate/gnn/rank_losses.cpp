#include "surrogate/gnn/rank_losses.h"

namespace perftune {

namespace {
// [B, B] mask of pairs (i, j) where i is strictly faster than j, and the prediction gap p_j - p_i.
std::pair<torch::Tensor, torch::Tensor> ordered_pairs(const torch::Tensor& pred, const torch::Tensor& target) {
  auto faster = target.unsqueeze(1) < target.unsqueeze(0);
  auto gap = pred.unsqueeze(0) - pred.unsqueeze(1);
  return {faster, gap};
}
}  // namespace

torch::Tensor pairwise_hinge_loss(const torch::Tensor& pred, const torch::Tensor& target, double margin) {
  auto [faster, gap] = ordered_pairs(pred, target);
  const auto count = faster.sum();
  if (count.item<std::int64_t>() == 0) return pred.sum() * 0.0;
  return (torch::relu(margin - gap) * faster).sum() / count;
}

torch::Tensor pairwise_logistic_loss(const torch::Tensor& pred, const torch::Tensor& target) {
  auto [faster, gap] = ordered_pairs(pred, target);
  const auto count = faster.sum();
  if (count.item<std::int64_t>() == 0) return pred.sum() * 0.0;
  return (torch::nn::functional::softplus(-gap) * faster).sum() / count;
}

torch::Tensor pairwise_lambda_loss(const torch::Tensor& pred, const torch::Tensor& target) {
  auto [faster, gap] = ordered_pairs(pred, target);
  if (faster.sum().item<std::int64_t>() == 0) return pred.sum() * 0.0;
  // Ranks are constants of the step (no gradient through the sort), as in LambdaRank.
  auto position_weight = [](const torch::Tensor& values) {
    auto rank = values.detach().argsort().argsort().to(torch::kFloat32);  // 0 = lowest (fastest)
    return 1.0 / torch::log2(rank + 2.0);
  };
  const auto gain = position_weight(target), discount = position_weight(pred);
  const auto weight = ((gain.unsqueeze(1) - gain.unsqueeze(0)).abs() *
                       (discount.unsqueeze(1) - discount.unsqueeze(0)).abs()) * faster;
  const auto total = weight.sum();
  if (total.item<double>() <= 0) return pred.sum() * 0.0;
  return (torch::nn::functional::softplus(-gap) * weight).sum() / total;
}

torch::Tensor list_mle_loss(const torch::Tensor& pred, const torch::Tensor& target) {
  if (pred.numel() < 2) return pred.sum() * 0.0;
  auto order = std::get<1>(target.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false));
  auto scores = -pred.index_select(0, order);  // fastest first
  // log sum_{k >= i} exp(s_k) for every i: a reversed cumulative logsumexp.
  auto tail = torch::logcumsumexp(scores.flip(0), 0).flip(0);
  return (tail - scores).sum();
}

torch::Tensor log_mse_loss(const torch::Tensor& pred, const torch::Tensor& target) { return (pred - target).pow(2).mean(); }

torch::Tensor combined_loss(const torch::Tensor& pred, const torch::Tensor& target, const LossWeights& weights) {
  auto loss = pred.sum() * 0.0;
  if (weights.list_mle > 0) loss = loss + weights.list_mle * list_mle_loss(pred, target);
  if (weights.mse > 0) loss = loss + weights.mse * log_mse_loss(pred, target);
  if (weights.pairwise_hinge > 0) loss = loss + weights.pairwise_hinge * pairwise_hinge_loss(pred, target, weights.hinge_margin);
  if (weights.pairwise_logistic > 0) loss = loss + weights.pairwise_logistic * pairwise_logistic_loss(pred, target);
  if (weights.pairwise_lambda > 0) loss = loss + weights.pairwise_lambda * pairwise_lambda_loss(pred, target);
  return loss;
}

}  // namespace perftune
