#include "surrogate/gnn/train_options.h"

#include <algorithm>

#include "surrogate/gnn/correction_shrinkage.h"
#include "surrogate/json_fields.h"

namespace perftune {

namespace {
constexpr int kMaxEnsemble = 32;
}  // namespace

nlohmann::ordered_json TrainOptions::to_json() const {
  nlohmann::ordered_json json{{"loss",
           {{"list_mle", loss.list_mle}, {"mse", loss.mse}, {"pairwise_hinge", loss.pairwise_hinge},
            {"pairwise_logistic", loss.pairwise_logistic}, {"pairwise_lambda", loss.pairwise_lambda},
            {"hinge_margin", loss.hinge_margin}}},
          {"learning_rate", learning_rate},
          {"epochs", epochs},
          {"steps_per_epoch", steps_per_epoch},
          {"kernels_per_step", kernels_per_step},
          {"configs_per_kernel", configs_per_kernel},
          {"patience", patience},
          {"select_top1_weight", select_top1_weight},
          {"validation_configs", validation_configs},
          {"validation_fraction", validation_fraction},
          {"seed", seed},
          {"time_limit_seconds", time_limit_seconds},
          {"update_steps", update_steps},
          {"replay_kernels", replay_kernels},
          {"replay_configs", replay_configs}};
  if (validation != "configs") json["validation"] = validation;
  if (ensemble != 1) json["ensemble"] = ensemble;
  if (epoch_selection != "member") json["epoch_selection"] = epoch_selection;
  if (!correction_scales.empty()) json["correction_scales"] = correction_scales;
  if (select_kernel_weight != "uniform") json["select_kernel_weight"] = select_kernel_weight;
  if (fast_share != 0.0) {
    json["fast_share"] = fast_share;
    json["fast_quantile"] = fast_quantile;
  }
  if (tiling_in_groups) json["tiling_in_groups"] = true;
  if (program_weight != 0.0) {
    json["program_weight"] = program_weight;
    json["programs_per_step"] = programs_per_step;
    json["placements_per_program"] = placements_per_program;
  }
  return json;
}

TrainOptions TrainOptions::from_json(const JsonView& json) {
  json.expect_keys({"loss", "learning_rate", "epochs", "steps_per_epoch", "kernels_per_step", "configs_per_kernel",
                    "patience", "select_top1_weight", "validation_configs", "validation", "validation_fraction", "ensemble", "epoch_selection",
                    "correction_scales", "fast_share", "fast_quantile", "tiling_in_groups", "select_kernel_weight", "seed",
                    "program_weight", "programs_per_step", "placements_per_program",
                    "time_limit_seconds", "update_steps", "replay_kernels", "replay_configs", "comment"});
  TrainOptions o;
  if (auto loss = json.find("loss")) {
    loss->expect_keys({"list_mle", "mse", "pairwise_hinge", "pairwise_logistic", "pairwise_lambda", "hinge_margin"});
    o.loss.list_mle = loss->get_number("list_mle", o.loss.list_mle);
    o.loss.mse = loss->get_number("mse", o.loss.mse);
    o.loss.pairwise_hinge = loss->get_number("pairwise_hinge", o.loss.pairwise_hinge);
    o.loss.pairwise_logistic = loss->get_number("pairwise_logistic", o.loss.pairwise_logistic);
    o.loss.pairwise_lambda = loss->get_number("pairwise_lambda", o.loss.pairwise_lambda);
    o.loss.hinge_margin = loss->get_number("hinge_margin", o.loss.hinge_margin);
    for (const char* key : {"list_mle", "mse", "pairwise_hinge", "pairwise_logistic", "pairwise_lambda", "hinge_margin"})
      if (auto v = loss->find(key)) (void)v->as_non_negative_number();
    if (o.loss.list_mle + o.loss.mse + o.loss.pairwise_hinge + o.loss.pairwise_logistic + o.loss.pairwise_lambda <= 0)
      loss->fail("at least one positive loss weight");
  }
  read_positive_ints(json, {{"epochs", &o.epochs}, {"steps_per_epoch", &o.steps_per_epoch},
                            {"kernels_per_step", &o.kernels_per_step}, {"configs_per_kernel", &o.configs_per_kernel},
                            {"patience", &o.patience}, {"validation_configs", &o.validation_configs},
                            {"ensemble", &o.ensemble}, {"update_steps", &o.update_steps}, {"replay_kernels", &o.replay_kernels},
                            {"replay_configs", &o.replay_configs}, {"programs_per_step", &o.programs_per_step},
                            {"placements_per_program", &o.placements_per_program}});
  if (o.placements_per_program < 2) json.at("placements_per_program").fail("at least 2 (ranking needs pairs)");
  if (auto v = json.find("program_weight")) o.program_weight = v->as_non_negative_number();
  if (o.configs_per_kernel < 2) json.at("configs_per_kernel").fail("at least 2 (ranking needs pairs)");
  if (auto v = json.find("learning_rate")) {
    o.learning_rate = v->as_non_negative_number();
    if (o.learning_rate <= 0) v->fail("a positive number");
  }
  if (auto v = json.find("validation")) {
    o.validation = v->as_string();
    if (o.validation != "configs" && o.validation != "kernels") v->fail("\"configs\" or \"kernels\"");
  }
  if (auto v = json.find("validation_fraction")) {
    o.validation_fraction = v->as_non_negative_number();
    if (o.validation_fraction >= 1) v->fail("a fraction in [0, 1)");
  }
  if (auto v = json.find("fast_share")) {
    o.fast_share = v->as_non_negative_number();
    if (o.fast_share > 1) v->fail("a share in [0, 1]");
  }
  if (auto v = json.find("fast_quantile")) {
    o.fast_quantile = v->as_non_negative_number();
    if (o.fast_quantile <= 0 || o.fast_quantile >= 1) v->fail("a fraction in (0, 1)");
  }
  if (auto v = json.find("tiling_in_groups")) o.tiling_in_groups = v->as_bool();
  if (auto v = json.find("epoch_selection")) {
    o.epoch_selection = v->as_string();
    if (o.epoch_selection != "member" && o.epoch_selection != "shared") v->fail("\"member\" or \"shared\"");
  }
  if (auto v = json.find("correction_scales")) {
    if (v->size() == 0) v->fail("at least one factor");
    for (std::size_t i = 0; i < v->size(); ++i) {
      const double scale = v->at(i).as_non_negative_number();
      if (scale > 1) v->at(i).fail("a factor in [0, 1]");
      o.correction_scales.push_back(scale);
    }
  }
  if (auto v = json.find("select_kernel_weight")) {
    o.select_kernel_weight = v->as_string();
    if (std::find(kKernelWeightRules.begin(), kKernelWeightRules.end(), o.select_kernel_weight) == kKernelWeightRules.end())
      v->fail(kernel_weight_rules_text());
  }
  // A bound against a typo, not a tuned value: members train one after another, so 32 already means 32x the time.
  if (o.ensemble > kMaxEnsemble) json.at("ensemble").fail("at most " + std::to_string(kMaxEnsemble) + " members");
  if (o.validation == "kernels" && o.validation_fraction <= 0)
    json.fail("\"validation_fraction\" > 0 with \"validation\": \"kernels\" (the share of training kernels to hold out)");
  if (auto v = json.find("select_top1_weight")) o.select_top1_weight = v->as_non_negative_number();
  if (auto v = json.find("seed")) o.seed = v->as_count();
  if (auto v = json.find("time_limit_seconds")) o.time_limit_seconds = v->as_non_negative_number();
  return o;
}

}  // namespace perftune
