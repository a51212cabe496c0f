#include "autotuner/factories/settings_reference.h"

#include "autotuner/campaign/campaign.h"
#include "autotuner/factories/backend_factory.h"
#include "autotuner/factories/model_spec.h"
#include "autotuner/factories/strategy_factory.h"
#include "hardware/halide/halide_backend_json.h"
#include "offline/corpus_collection.h"

namespace perftune {

std::string settings_reference_markdown() {
  return "# Settings reference\n\n"
         "Generated from each component's settings table (`ir/settings_table.h`); do not edit by hand. After a\n"
         "change to a table, `PERFTUNE_WRITE_SETTINGS=1 build/tests/test_autotuner \"docs/settings.md*\"` rewrites it.\n"
         "`perftune settings [SECTION]` prints the same, or the sections whose heading names SECTION.\n\n"
         "## A campaign's tuning loop (top-level keys of a campaign)\n\n"
         "Beside `name`, `description`, `source`, `backend`, `model`, `strategy`, `budget`, `output`, `default` and\n"
         "`allocation` (`autotuner/campaign/campaign.h`). Where a default names a replay, the backend's traits set it\n"
         "(`backend_traits` in `autotuner/factories/backend_factory.h`).\n\n" +
         campaign_tuner_settings().markdown() + "\n" + strategy_settings_markdown() +
         "\n## A campaign's model (`\"model\": {\"type\": ..., ...}`)\n\n"
         "`\"type\"` is `\"none\"` (model-free search, no other key), `\"analytical\"`, `\"learned\"`, `\"recorded\"` or\n"
         "`\"gaussian_process\"` (`autotuner/factories/model_spec.h`); the keys beside it depend on the type. Paths are\n"
         "relative to the config's folder.\n\n"
         "### analytical: the roofline over a device spec\n\n" +
         analytical_model_settings().markdown() +
         "\n### learned: a GNN or tree model, pre-trained or trained online\n\n"
         "At most one of `checkpoint`, `checkpoints` and `params`; none is the shipped model (`models/`).\n\n" +
         learned_model_settings().markdown() +
         "\n### recorded: other devices' recorded times as the model\n\n" + recorded_model_settings().markdown() +
         "\n### gaussian_process: Bayesian optimization on the target alone\n\n" + gaussian_process_settings().markdown() +
         "\n## A model's residual (`\"model\": {..., \"residual\": {...}}`)\n\n"
         "A Gaussian-process correction of a learned or recorded prior by the target's own measurements\n"
         "(`surrogate/transfer/target_residual.h`).\n\n" +
         residual_settings().markdown() +
         "\n## The live CPU backend (`\"backend\": {\"type\": \"cpu\", ...}`, and `collect`'s `\"cpu\"` object)\n\n"
         "Halide 14 on this machine (`hardware/halide/halide_backend.h`).\n\n" +
         halide_backend_settings().markdown() +
         "\n## The replay backend (`\"backend\": {\"type\": \"replay\", \"cost\": {...}}`)\n\n"
         "Serves a recording; `cost` is what each served config charges to the hardware-seconds budget.\n\n" +
         replay_cost_settings().markdown() +
         "\n## The command backend (`\"backend\": {\"type\": \"command\", ...}`)\n\n"
         "Your own runner, one process per command (`hardware/command/command_backend.h`).\n\n" +
         command_backend_settings().markdown() +
         "\n## Faults (`\"backend\": {..., \"faults\": {...}}`, any backend)\n\n"
         "Rehearses bad hardware (`hardware/wrappers/fault_injecting_backend.h`).\n\n" + fault_settings().markdown() +
         "\n## A corpus collection (`perftune collect CONFIG.json`, `configs/collect/`)\n\n"
         "Live Halide measurements of generated or real programs' kernels, for training (`offline/corpus_collection.h`).\n\n" +
         collect_settings().markdown();
}

}  // namespace perftune
