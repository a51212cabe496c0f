#pragma once
// The schedule features this build computes, provided to tree models under their names
// (surrogate/trees/schedule_features.h):
//   "halide_loop_nest"  the statistics of the loop nest Halide 14 lowers each config to
//                       (hardware/halide/loop_nest_features.h), computed in two Halide workers; each
//                       kernel's configs are lowered once per process.
namespace perftune {

void provide_schedule_feature_sources();

}  // namespace perftune
