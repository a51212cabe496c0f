#pragma once
// Losses over one kernel's configs (a group): predictions are log seconds (lower = faster),
// targets measured log seconds. Only successful measurements enter a group.
#include <torch/torch.h>

#include "surrogate/train_options.h"

namespace perftune {

// Mean over pairs (i, j) with target_i < target_j of max(0, margin - (pred_j - pred_i)); 0 without pairs.
torch::Tensor pairwise_hinge_loss(const torch::Tensor& pred, const torch::Tensor& target, double margin);
// Mean over the same pairs of log(1 + exp(-(pred_j - pred_i))) (RankNet / AutoTVM's rank loss).
torch::Tensor pairwise_logistic_loss(const torch::Tensor& pred, const torch::Tensor& target);
// ListMLE (Xia et al. 2008) with score = -pred: the negative log-likelihood of the true order
// (fastest first) under Plackett-Luce, summed over positions as TF-Ranking does.
torch::Tensor list_mle_loss(const torch::Tensor& pred, const torch::Tensor& target);
// Mean squared error on log seconds.
torch::Tensor log_mse_loss(const torch::Tensor& pred, const torch::Tensor& target);
// The weighted sum the options ask for.
torch::Tensor combined_loss(const torch::Tensor& pred, const torch::Tensor& target, const LossWeights& weights);

}  // namespace perftune
