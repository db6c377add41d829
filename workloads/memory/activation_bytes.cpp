#include "workloads/memory/activation_bytes.hpp"

#include <algorithm>

#include "vocabulary/model_params.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/layers/op_sac.hpp"

namespace stepsim {

namespace {

constexpr double kBf16 = 2, kFp32 = 4;

// Bytes kept per token when `keep_all` (no recompute) or under DeepSeek's policy (RMSNorms, MLA
// up-projections and SwiGLU rebuilt in backward from what is kept).
double kept_bytes(const Plan& plan, bool moe, bool keep_all) {
  const ModelConfig& m = plan.model;
  const double fp8 = stash_bytes_per_value(plan);
  // DeepSeek keeps the attention output (out-projection input) in its E5M6 format (report 3.3.3).
  const double attn_out = plan.parallel.fp8_stash ? 1.5 : kBf16;
  const double h = double(m.hidden_size), heads = double(m.num_attention_heads);
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m));
  double b = kBf16 * h;                     // layer input: every recompute starts from it
  if (keep_all) b += fp8 * h + kFp32;       // first RMSNorm's output (projection input) + its rstd
  if (m.is_mla()) {
    const double q_lat = double(m.q_lora_rank), kv_lat = double(m.kv_lora_rank);
    b += kBf16 * (q_lat + kv_lat);          // latents before their RMSNorms
    if (keep_all) {
      b += fp8 * (q_lat + kv_lat) + kFp32 * ((q_lat > 0 ? 1 : 0) + 1);  // normed latents + rstds
      b += kBf16 * heads * qk + kBf16 * heads * (qk + v);               // q and k, v after RoPE
    }
  } else {
    // Per token of the replica (sequence parallelism divides by tp later): fewer KV heads than TP
    // ranks are replicated, each rank keeping one whole head.
    const double kv_heads = double(m.kv_heads()) *
                            double(kv_head_replicas(plan));
    b += kBf16 * (heads * qk + kv_heads * (qk + v));  // q, k, v: no up-projection to rebuild them from
  }
  b += attn_out * heads * v + kFp32 * heads;  // attention output + log-sum-exp per head
  b += kBf16 * h;                             // residual after attention (second RMSNorm's input)
  if (keep_all) b += fp8 * h + kFp32;         // second RMSNorm's output + rstd
  if (moe) {
    const double experts = double(m.n_routed_experts), k = double(m.num_experts_per_tok);
    // FFN width a token passes through: its routed experts, DeepSeek's shared ones, Qwen's shared expert.
    const double inter = (k + double(m.n_shared_experts)) * double(m.moe_intermediate_size) +
                         double(m.shared_expert_intermediate_size);
    b += kFp32 * (2 * experts + 4 * k);   // router logits, scores, top-k weights, indices, routing maps
    // Dispatched token copies: the routed experts' gate/up input (expert TP keeps its group's rows).
    b += fp8 * k * h * double(plan.parallel.expert_tp);
    b += fp8 * 2 * inter;                 // gate/up outputs: SwiGLU's input
    if (keep_all) b += fp8 * inter;       // SwiGLU output: the down-projection's input
  } else {
    const double inter = double(m.intermediate_size);
    b += fp8 * 2 * inter;
    if (keep_all) b += fp8 * inter;
  }
  return b;
}

}  // namespace

double stash_bytes_per_value(const Plan& plan) { return plan.parallel.fp8_stash ? 1.0 + kFp32 / 128.0 : kBf16; }

LayerActivations layer_activations(const Plan& plan, bool moe_layer) {
  LayerActivations a;
  switch (plan.parallel.recompute) {
    // FlashAttention keeps no attention scores, so Megatron's selective recompute (the attention
    // core) saves nothing beyond what is kept without recompute; it only costs time.
    case Recompute::None:
    case Recompute::Selective: a.saved_per_token = kept_bytes(plan, moe_layer, true); break;
    case Recompute::DeepSeek: a.saved_per_token = kept_bytes(plan, moe_layer, false); break;
    case Recompute::TorchtitanOp:
      a.saved_per_token = op_sac_saved_bytes_per_token(plan.model);
      a.recompute_per_token = std::max(0.0, kept_bytes(plan, moe_layer, true) - a.saved_per_token);
      break;
    case Recompute::Full:
      a.saved_per_token = kBf16 * double(plan.model.hidden_size);
      a.recompute_per_token = kept_bytes(plan, moe_layer, true) - a.saved_per_token;
      break;
  }
  return a;
}

double head_activation_bytes_per_token(const ModelConfig& m) { return (kBf16 + kFp32) * double(m.vocab_size); }

double head_weight_gradient_bytes_per_token(const Plan& plan) {
  const ModelConfig& m = plan.model;
  return std::min(head_activation_bytes_per_token(m),
                  kBf16 * double(m.vocab_size) + kBf16 * double(m.hidden_size) * double(RankLayout(plan).tp()));
}

}  // namespace stepsim
