#pragma once
// Losses over one kernel's configs (a group): predictions are log seconds (lower = faster),
// targets measured log seconds. Only successful measurements enter a group.
#include <torch/torch.h>

#include "surrogate/gnn/train_options.h"

namespace perftune {

// Mean over pairs (i, j) with target_i < target_j of max(0, margin - (pred_j - pred_i)); 0 without pairs.
torch::Tensor pairwise_hinge_loss(const torch::Tensor& pred, const torch::Tensor& target, double margin);
// Mean over the same pairs of log(1 + exp(-(pred_j - pred_i))) (RankNet / AutoTVM's rank loss).
torch::Tensor pairwise_logistic_loss(const torch::Tensor& pred, const torch::Tensor& target);
// LambdaRank-style top-heavy pairwise loss (Burges et al. 2006, LambdaLoss's NDCG weighting): the
// logistic loss of each ordered pair weighted by |G_i - G_j| * |D(p_i) - D(p_j)|, where G is the
// gain of the true rank (1 / log2(2 + rank), fastest = rank 0) and D the discount of the predicted
// position (same formula), so swaps near the top of either order cost most; weighted mean over pairs.
torch::Tensor pairwise_lambda_loss(const torch::Tensor& pred, const torch::Tensor& target);
// ListMLE (Xia et al. 2008) with score = -pred: the negative log-likelihood of the true order
// (fastest first) under Plackett-Luce, summed over positions as TF-Ranking does.
torch::Tensor list_mle_loss(const torch::Tensor& pred, const torch::Tensor& target);
// Mean squared error on log seconds.
torch::Tensor log_mse_loss(const torch::Tensor& pred, const torch::Tensor& target);
// The weighted sum the options ask for.
torch::Tensor combined_loss(const torch::Tensor& pred, const torch::Tensor& target, const LossWeights& weights);

}  // namespace perftune
