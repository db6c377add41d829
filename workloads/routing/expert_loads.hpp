// The per-(MoE layer, microbatch) expert-load table of a step: the share of an EP group's routed
// rows each expert receives. Popularity comes from expert_popularity(); for the sampled models
// (zipf, dirichlet, hot) each microbatch then draws its counts as a multinomial of the
// group's rows over that popularity (normal approximation with the multinomial's exact means and
// covariances, from scenario.seed), so two microbatches of one layer differ as real batches do.
// Balanced and file loads are the same for every microbatch. DeepSeek's routing with iid scores
// gives every expert the same expected load, and the table keeps that mean (its multinomial noise,
// 0.8 % of an expert's rows at the default batch, would cost the exact one-replica replay; zipf
// with s = 0 draws it). Every EP group of a stage sees the same table (they run statistically
// identical batches), which keeps EP groups symmetric.
#pragma once

#include <cstdint>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

// Whether the plan's routing gives experts different loads (so the GPUs of an EP group differ).
bool uneven_loads(const Plan& plan);

// Rows an expert keeps under parallel.moe_capacity_factor C when every expert gets its mean load,
// as a multiple of that load: C when padded to capacity, min(1, C) when the excess is dropped, 1
// dropless (C = 0). Under uneven loads ExpertLoads caps each expert's share at C / experts instead.
double balanced_kept_rows(const Plan& plan);

class ExpertLoads {
 public:
  explicit ExpertLoads(const Plan& plan);

  // Every expert gets exactly its mean share (routing balanced, or the report's baseline), times
  // balanced_kept_rows() (the capacity factor's drops or padding).
  bool balanced() const { return balanced_; }
  int64_t experts() const { return experts_; }
  int64_t ep() const { return ep_; }
  int64_t microbatches() const { return microbatches_; }
  int64_t moe_layers() const { return moe_layers_; }
  int64_t first_moe_layer() const { return first_moe_layer_; }

  // Share of the group's routed rows that expert `e` / EP slot `slot` (the GPU at that position
  // in its EP group, holding experts [slot E / ep, (slot + 1) E / ep)) receives, after the capacity
  // factor's drops or padding (so the shares add up to less, or more, than 1). `layer` is the
  // model's layer index (an MoE layer).
  double expert_share(int64_t layer, int64_t mb, int64_t e) const {
    return expert_[size_t(((layer - first_moe_layer_) * microbatches_ + mb) * experts_ + e)];
  }
  double slot_share(int64_t layer, int64_t mb, int64_t slot) const {
    return slot_[size_t(((layer - first_moe_layer_) * microbatches_ + mb) * ep_ + slot)];
  }
  const double* slot_shares(int64_t layer, int64_t mb) const {
    return &slot_[size_t(((layer - first_moe_layer_) * microbatches_ + mb) * ep_)];
  }

  // Routed rows of one EP group in one microbatch, the multinomial's trial count (mean over groups).
  static double group_rows_per_microbatch(const Plan& plan);

 private:
  bool balanced_ = true;
  int64_t experts_ = 0, ep_ = 1, microbatches_ = 1, moe_layers_ = 0, first_moe_layer_ = 0;
  std::vector<double> expert_;  // [(moe layer * microbatches + mb) * experts + e]
  std::vector<double> slot_;    // [(moe layer * microbatches + mb) * ep + slot]
};

}  // namespace stepsim
