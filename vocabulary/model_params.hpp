// Parameter counts of a transformer described by a ModelConfig, split by role, so that FLOPs,
// ZeRO traffic and precision can each be charged to the right parameters.
#pragma once

#include <cstdint>

#include "vocabulary/plan.hpp"

namespace stepsim {

// Matmul parameters of one attention block (MLA or standard multi-head / grouped-query).
struct AttentionParams {
  int64_t q_down = 0;   // hidden -> q_lora_rank (MLA with query compression)
  int64_t kv_down = 0;  // hidden -> kv_lora_rank + rope dims (MLA)
  int64_t q_up = 0;     // latent (or hidden) -> heads x qk dims
  int64_t kv_up = 0;    // latent (or hidden) -> heads x (k + v) dims
  int64_t out = 0;      // heads x v dims -> hidden
  int64_t bias = 0;     // bias vectors of the projections (GPT-NeoX), not matmul weights
  int64_t total() const { return q_down + kv_down + q_up + kv_up + out + bias; }
};

struct ModelParams {
  AttentionParams attention;      // per layer
  int64_t norms_per_layer = 0;    // RMSNorm weights (not matmuls, counted in N as the seed does)
  int64_t dense_ffn = 0;          // per dense layer (gate, up, down; or up, down), with its biases
  int64_t dense_ffn_bias = 0;     //   of which bias vectors (GPT-NeoX): no matmul FLOPs
  int64_t expert_bias = 0;        // the same for one routed expert
  int64_t shared_experts_bias = 0;  // and for a layer's shared experts
  int64_t router = 0;             // per MoE layer, incl. the bias DeepSeek uses for balancing
  int64_t shared_experts = 0;     // per MoE layer
  int64_t expert = 0;             // one routed expert
  int64_t embedding = 0;
  int64_t lm_head = 0;
  int64_t final_norm = 0;
  int64_t recompute_per_layer = 0;  // MLA up-projections (DeepSeek's policy); none for other attention
  int64_t moe_layers = 0;
  int64_t dense_layers = 0;
  int64_t experts_per_layer = 0;
  int64_t experts_per_token = 0;

  // Per layer, everything but routed experts.
  int64_t dense_layer() const { return attention.total() + norms_per_layer + dense_ffn; }
  int64_t moe_layer_non_expert() const { return attention.total() + norms_per_layer + router + shared_experts; }
  int64_t routed_experts_per_layer() const { return expert * experts_per_layer; }

  // Whole model.
  int64_t routed_experts_total() const { return routed_experts_per_layer() * moe_layers; }
  int64_t non_expert_total() const {
    return moe_layer_non_expert() * moe_layers + dense_layer() * dense_layers + embedding + lm_head + final_norm;
  }
  int64_t total() const { return non_expert_total() + routed_experts_total(); }

  // N of 6ND: parameters a token passes through as matmuls (embedding is a lookup, not a matmul).
  int64_t activated() const {
    return (moe_layer_non_expert() + expert * experts_per_token) * moe_layers + dense_layer() * dense_layers +
           lm_head + final_norm;
  }
  // Matmuls DeepSeek-V3 keeps in BF16: MoE routers and the LM head.
  int64_t bf16_matmul() const { return router * moe_layers + lm_head; }
  // Recomputed in backward under DeepSeek's policy: the MLA up-projections of every layer.
  int64_t recomputed() const { return recompute_per_layer * (moe_layers + dense_layers); }
};

ModelParams count_params(const ModelConfig& m);

// Attention core (QK^T and PV, no weights) of one layer for one sequence, forward, causal.
struct AttentionCoreFlops {
  double qk = 0;  // QK^T-shaped
  double pv = 0;  // PV-shaped
  double forward() const { return qk + pv; }
  // FlashAttention-style backward recomputes QK^T and computes dQ, dK (QK-shaped) and dV, dP
  // (PV-shaped): QK-shaped matmuls run 4 times in a training step, PV-shaped 3 times.
  double training() const { return 4 * qk + 3 * pv; }
};

// `window` > 0: a sliding window of that many keys per query (ModelConfig::attention_window).
AttentionCoreFlops attention_core_flops(const ModelConfig& m, int64_t seq_len, int64_t window = 0);
// Summed over the model's layers, each at its own window.
AttentionCoreFlops attention_core_flops_all_layers(const ModelConfig& m, int64_t seq_len);

// Query-key and value widths per head.
int64_t qk_head_dim(const ModelConfig& m);
int64_t v_head_dim(const ModelConfig& m);
// Values per token that RoPE rotates: the rotary dims of every query and key head (MLA: the
// queries' rope dims and the one shared rope key).
double rotary_values_per_token(const ModelConfig& m);

}  // namespace stepsim
