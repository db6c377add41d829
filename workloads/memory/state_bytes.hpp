// Bytes a GPU holds for the whole step, apart from activations: BF16 weights, FP32 gradients and
// the optimizer state (FP32 master weights + Adam's two moments in train.adam_moments_dtype: FP32 as
// Megatron and torchtitan keep them, BF16 as DeepSeek-V3 did, report 3.3.4), sharded the way the plan says, plus persistent buffers: the MoE all-to-all's send
// and receive buffers and, under FSDP, the gather staging (current + prefetched unit) and one unit
// of unsharded gradients awaiting its reduce-scatter (allocated for the whole step, as the seed
// series assumes), and under parallel.tp_comm_overlap Transformer Engine's userbuffers.
#pragma once

#include <string>
#include <vector>

#include "schedules/schedule.hpp"
#include "vocabulary/plan.hpp"
#include "vocabulary/memory_model.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim {

inline constexpr double kWeightBytesPerParam = 2;     // BF16
inline constexpr double kGradBytesPerParam = 4;       // FP32 accumulation
inline constexpr double kMasterWeightBytesPerParam = 4;  // FP32 master copy

// Optimizer state per parameter of the shard: the FP32 master weight and both Adam moments. With
// BF16 weights and FP32 gradients, Megatron's distributed-optimizer table (docs/distrib_optimizer.md
// at core_r0.8.0) gives 6 + 12/d bytes per parameter for FP32 moments.
double optimizer_state_bytes_per_param(const Plan& plan);

// Parameters one GPU holds before any ZeRO sharding (TP shards applied, routed experts divided over EP).
struct HeldParams {
  double non_expert = 0;
  double expert = 0;
  HeldParams& operator+=(const HeldParams& o) {
    non_expert += o.non_expert;
    expert += o.expert;
    return *this;
  }
};

// Parameters of `held` in this GPU's ZeRO shard (the optimizer state it keeps and steps): non-experts
// over the GPUs holding the same weights (DP x CP, or the HSDP shard group), experts over expert-DP.
double zero_shard_params(const Plan& plan, const HeldParams& held);

// One layer, the embedding (stage 0) and the LM head with the final norm (its stage).
HeldParams layer_held_params(const Plan& plan, const ModelParams& p, int64_t layer);
HeldParams stage_held_params(const Plan& plan, const ModelParams& p, const StageLayers& s, bool first_stage);
// What pipeline rank `rank` holds over its chunks under `schedule`; the embedding goes with the
// chunk on layer slot 0 (DualPipe's mirrored stage P holds it on the last rank too).
HeldParams rank_held_params(const Plan& plan, const ModelParams& p, const sched::Schedule& schedule,
                            const std::vector<StageLayers>& stages, int64_t rank);
// The whole model as one TP rank holds it (experts divided over EP), before pipeline or ZeRO splits.
HeldParams model_held_params(const Plan& plan, const ModelParams& p);

// Of layer_held_params, the weights the layer's FP8 GEMMs read: the attention projections, the dense
// MLP, the shared and routed experts (their bias vectors, the norms and the router stay BF16); none
// in a layer whose GEMMs run in BF16. model_: the whole model's, as model_held_params counts it.
HeldParams layer_quantised_params(const Plan& plan, const ModelParams& p, int64_t layer);
HeldParams model_quantised_params(const Plan& plan, const ModelParams& p);
// Bytes of `held` parameters in the parameter all-gather, `quantised` of them at
// Plan::gathered_weight_bytes() and the rest in BF16.
HeldParams gathered_bytes(const Plan& plan, const HeldParams& held, const HeldParams& quantised);
// Of rank_held_params, the FP8 GEMMs' weights (layer_quantised_params over the rank's layers).
HeldParams rank_quantised_params(const Plan& plan, const ModelParams& p, const sched::Schedule& schedule,
                                 const std::vector<StageLayers>& stages, int64_t rank);

// The largest FSDP unit a GPU gathers (a layer, with the embedding on layer 0, or the head), in
// parameters per GPU after gathering.
double largest_fsdp_unit_params(const Plan& plan, const ModelParams& p);

// Tokens of the largest microbatch a GPU holds between blocks (its 1 / (tp x cp) shard).
double largest_microbatch_tokens(const Plan& plan);

// How the weights are held, for the memory reports: "BF16", "BF16 + a cached FP8 copy of the GEMMs'
// (2 B a value)", or "FP8 GEMMs' in their format (1 B a value), the rest BF16" (the format's name);
// short: "BF16", "BF16 + FP8 copy", "FP8 + BF16".
std::string weights_format_text(const Plan& plan, bool short_form = false);

// `held`: what the GPU's stages hold (the whole model for FSDP); `quantised`: of those, the FP8
// GEMMs' weights, held in their format instead of BF16 (parallel.fp8_param_gather) or beside it
// (software.fp8_weight_cache) at Plan::held_weight_bytes() a value.
ops::StaticMemory static_memory(const Plan& plan, const HeldParams& held, const HeldParams& quantised = {});

}  // namespace stepsim
