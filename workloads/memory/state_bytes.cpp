#include "workloads/memory/state_bytes.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "vocabulary/dtype_bytes.hpp"
#include "workloads/traffic/ep_traffic.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/layer_spec.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {

HeldParams layer_held_params(const Plan& plan, const ModelParams& p, int64_t layer) {
  // Megatron TP shards the attention and dense-FFN matmuls over tp; norms are replicated, and
  // routers and shared experts keep TP 1; routed experts are divided over EP and split over expert TP.
  const RankLayout layout(plan);
  const double tp = double(layout.tp());
  if (!layer_spec(plan, layer).moe)
    return {double(p.attention.total() + p.dense_ffn) / tp + double(p.norms_per_layer), 0.0};
  return {double(p.attention.total()) / tp + double(p.norms_per_layer + p.router + p.shared_experts),
          double(p.routed_experts_per_layer()) / double(layout.ep() * layout.etp())};
}

HeldParams stage_held_params(const Plan& plan, const ModelParams& p, const StageLayers& s, bool first_stage) {
  HeldParams h;
  for (int64_t l = s.first; l < s.first + s.count; ++l) h += layer_held_params(plan, p, l);
  // Embedding and LM head are vocabulary-parallel over TP.
  const double tp = double(RankLayout(plan).tp());
  if (first_stage) h.non_expert += double(p.embedding) / tp;
  if (s.has_lm_head) h.non_expert += double(p.lm_head) / tp + double(p.final_norm);
  return h;
}

HeldParams model_held_params(const Plan& plan, const ModelParams& p) {
  HeldParams h;
  for (int64_t l = 0; l < plan.model.num_hidden_layers; ++l) h += layer_held_params(plan, p, l);
  const double tp = double(RankLayout(plan).tp());
  h.non_expert += double(p.embedding) / tp + double(p.lm_head) / tp + double(p.final_norm);
  return h;
}

HeldParams layer_quantised_params(const Plan& plan, const ModelParams& p, int64_t layer) {
  const LayerSpec spec = layer_spec(plan, layer);
  if (spec.precision != Precision::FP8) return {};
  const RankLayout layout(plan);
  const double tp = double(layout.tp());
  const double attention = double(p.attention.total() - p.attention.bias) / tp;
  if (!spec.moe) return {attention + double(p.dense_ffn - p.dense_ffn_bias) / tp, 0.0};
  return {attention + double(p.shared_experts - p.shared_experts_bias),
          double((p.expert - p.expert_bias) * p.experts_per_layer) / double(layout.ep() * layout.etp())};
}

HeldParams model_quantised_params(const Plan& plan, const ModelParams& p) {
  HeldParams q;
  for (int64_t l = 0; l < plan.model.num_hidden_layers; ++l) q += layer_quantised_params(plan, p, l);
  return q;
}

HeldParams gathered_bytes(const Plan& plan, const HeldParams& held, const HeldParams& quantised) {
  const double saved = kBf16Bytes - plan.gathered_weight_bytes();
  return {kBf16Bytes * held.non_expert - saved * quantised.non_expert, kBf16Bytes * held.expert - saved * quantised.expert};
}

double largest_fsdp_unit_params(const Plan& plan, const ModelParams& p) {
  const double tp = double(RankLayout(plan).tp());
  double most = double(p.lm_head) / tp + double(p.final_norm);
  for (int64_t l = 0; l < plan.model.num_hidden_layers; ++l) {
    const HeldParams h = layer_held_params(plan, p, l);
    most = std::max(most, h.non_expert + h.expert + (l == 0 ? double(p.embedding) / tp : 0.0));
  }
  return most;
}

double largest_microbatch_tokens(const Plan& plan) {
  const double per_replica = std::ceil(plan.sequences_per_replica());
  return std::ceil(per_replica / double(plan.parallel.microbatches)) * double(plan.train.seq_len) /
         double(RankLayout(plan).token_split());
}

double optimizer_state_bytes_per_param(const Plan& plan) {
  const double moment_bytes = plan.train.adam_moments_dtype == MomentDtype::FP32 ? 4 : 2;
  return kMasterWeightBytesPerParam + 2 * moment_bytes;
}

// The sum of `of(stage layers, whether it is the first stage)` over the pipeline stages the rank's
// model chunks hold.
template <typename Of>
HeldParams over_rank_stages(const sched::Schedule& schedule, const std::vector<StageLayers>& stages, int64_t rank,
                            Of of) {
  HeldParams sum;
  for (int32_t c = 0; c < schedule.chunks_per_rank(); ++c) {
    const int64_t slot = schedule.layer_slot(schedule.stage_of(rank, c));
    sum += of(stages[size_t(slot)], slot == 0);
  }
  return sum;
}

HeldParams rank_held_params(const Plan& plan, const ModelParams& p, const sched::Schedule& schedule,
                            const std::vector<StageLayers>& stages, int64_t rank) {
  return over_rank_stages(schedule, stages, rank,
                          [&](const StageLayers& s, bool first) { return stage_held_params(plan, p, s, first); });
}

double zero_shard_params(const Plan& plan, const HeldParams& held) {
  // ZeRO shards non-experts over the GPUs holding the same weights (data-parallel replicas x CP
  // ranks, as Megatron's distributed optimizer does) and experts over expert-DP.
  // HSDP shards ZeRO-3 state over fsdp_shard_size of them (experts: fsdp_shard_size x tp / ep).
  const RankLayout layout(plan);
  const int64_t hsdp = plan.parallel.zero == 3 ? plan.parallel.fsdp_shard_size : 0;
  const double dp = double(hsdp > 0 ? hsdp : layout.grad_group_size());
  const double edp = double(hsdp > 0 ? std::max<int64_t>(1, hsdp * layout.tp() / layout.ep_group_span())
                                     : std::max<int64_t>(1, plan.edp()));
  return held.non_expert / dp + held.expert / edp;
}

HeldParams rank_quantised_params(const Plan& plan, const ModelParams& p, const sched::Schedule& schedule,
                                 const std::vector<StageLayers>& stages, int64_t rank) {
  return over_rank_stages(schedule, stages, rank, [&](const StageLayers& s, bool) {
    HeldParams q;
    for (int64_t l = s.first; l < s.first + s.count; ++l) q += layer_quantised_params(plan, p, l);
    return q;
  });
}

std::string weights_format_text(const Plan& plan, bool short_form) {
  if (plan.train.precision != Precision::FP8 || plan.parallel.zero == 3) return "BF16";
  std::string format = precision_name(plan.train);
  for (char& c : format) c = char(std::toupper(static_cast<unsigned char>(c)));
  const std::string bytes = fmt::format("{:.3g} B a value", plan.held_weight_bytes());
  if (plan.parallel.fp8_param_gather)
    return short_form ? format + " + BF16" : "the " + format + " GEMMs' in their format (" + bytes + "), the rest BF16";
  if (plan.software.fp8_weight_cache)
    return short_form ? "BF16 + " + format + " copy" : "BF16 + a cached " + format + " copy of the GEMMs' (" + bytes + ")";
  return "BF16";
}

ops::StaticMemory static_memory(const Plan& plan, const HeldParams& held, const HeldParams& quantised) {
  ops::StaticMemory s;
  const RankLayout layout(plan);
  const double all = held.non_expert + held.expert;
  const double shard = zero_shard_params(plan, held);
  const bool zero3 = plan.parallel.zero == 3, zero2 = plan.parallel.zero >= 2;
  s.weights_bytes = kWeightBytesPerParam * (zero3 ? shard : all);
  // The FP8 GEMMs' weights in their format: instead of BF16 (FP8 parameters), or beside it as the
  // step's cached copy. ZeRO-3 shards and gathers them per layer (not counted here).
  const double quantised_all = quantised.non_expert + quantised.expert;
  if (!zero3 && plan.train.precision == Precision::FP8) {
    if (plan.parallel.fp8_param_gather)
      s.weights_bytes += (plan.held_weight_bytes() - kWeightBytesPerParam) * quantised_all;
    else if (plan.software.fp8_weight_cache)
      s.weights_bytes += plan.held_weight_bytes() * quantised_all;
  }
  // The unsharded gradient buffer is kept in the reduction's format (Megatron's main_grad buffer, FSDP2's
  // accumulated gradient); a ZeRO-2 or -3 shard is the optimizer's FP32 gradient.
  s.grads_bytes = zero2 ? kGradBytesPerParam * shard : plan.parallel.grad_reduce_bytes() * all;
  s.optimizer_bytes = optimizer_state_bytes_per_param(plan) * shard;
  const ModelConfig& m = plan.model;
  if (m.is_moe() && layout.ep() > 1)
    s.buffers_bytes += largest_microbatch_tokens(plan) * double(m.num_experts_per_tok) *
                       (dispatch_bytes_per_token(plan) + combine_bytes_per_token(m));
  if (zero3) {
    const double unit = largest_fsdp_unit_params(plan, count_params(m));
    s.buffers_bytes += 2 * kWeightBytesPerParam * unit + plan.parallel.grad_reduce_bytes() * unit;
  }
  // tp_comm_overlap: userbuffers' staging, registered once for the microbatch's tokens on a CP rank.
  // overlap_grad_reduce / overlap_param_gather add nothing: Megatron's buckets are views into the
  // gradient and parameter buffers already counted above.
  s.buffers_bytes += ub_buffer_bytes(plan, largest_microbatch_tokens(plan) * double(layout.tp()));
  return s;
}

}  // namespace stepsim
