#include "workloads/memory/state_bytes.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/deepseek/ep_traffic.hpp"
#include "workloads/model/layer_spec.hpp"

namespace stepsim {

HeldParams layer_held_params(const Plan& plan, const ModelParams& p, int64_t layer) {
  if (!layer_spec(plan, layer).moe) return {double(p.dense_layer()), 0.0};
  return {double(p.moe_layer_non_expert()), double(p.routed_experts_per_layer()) / double(plan.parallel.ep)};
}

HeldParams stage_held_params(const Plan& plan, const ModelParams& p, const StageLayers& s, bool first_stage) {
  HeldParams h;
  for (int64_t l = s.first; l < s.first + s.count; ++l) h += layer_held_params(plan, p, l);
  if (first_stage) h.non_expert += double(p.embedding);
  if (s.has_lm_head) h.non_expert += double(p.lm_head + p.final_norm);
  return h;
}

double largest_fsdp_unit_params(const Plan& plan, const ModelParams& p) {
  double most = double(p.lm_head + p.final_norm);
  for (int64_t l = 0; l < plan.model.num_hidden_layers; ++l) {
    const HeldParams h = layer_held_params(plan, p, l);
    most = std::max(most, h.non_expert + h.expert + (l == 0 ? double(p.embedding) : 0.0));
  }
  return most;
}

double largest_microbatch_tokens(const Plan& plan) {
  const double per_replica = std::ceil(plan.sequences_per_replica());
  return std::ceil(per_replica / double(plan.parallel.microbatches)) * double(plan.train.seq_len);
}

engine::StaticMemory static_memory(const Plan& plan, const HeldParams& held) {
  engine::StaticMemory s;
  const double dp = double(plan.dp()), edp = double(std::max<int64_t>(1, plan.edp()));
  const double all = held.non_expert + held.expert;
  const double shard = held.non_expert / dp + held.expert / edp;  // ZeRO: non-experts over DP, experts over expert-DP
  const bool zero3 = plan.parallel.zero == 3;
  s.weights_bytes = kWeightBytesPerParam * (zero3 ? shard : all);
  s.grads_bytes = kGradBytesPerParam * (zero3 ? shard : all);
  s.optimizer_bytes = kOptimizerBytesPerParam * shard;
  const ModelConfig& m = plan.model;
  if (m.is_moe() && plan.parallel.ep > 1)
    s.buffers_bytes += largest_microbatch_tokens(plan) * double(m.num_experts_per_tok) *
                       (dispatch_bytes_per_token(plan) + combine_bytes_per_token(m));
  if (zero3) {
    const double unit = largest_fsdp_unit_params(plan, count_params(m));
    s.buffers_bytes += 2 * kWeightBytesPerParam * unit + kGradBytesPerParam * unit;
  }
  return s;
}

}  // namespace stepsim
