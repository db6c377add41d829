#include "workloads/memory/activation_bytes.hpp"

#include <algorithm>

#include "vocabulary/model_params.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/layers/op_sac.hpp"

namespace stepsim {

namespace {

constexpr double kBf16 = 2, kFp32 = 4;
// An eager RMSNorm keeps its FP32 input and its BF16 product before the weight.
constexpr double kEagerNorm = kFp32 + kBf16;

// Bytes per token a layer keeps for its backward under the recompute modules `r` (not full), and
// what the plain checkpoints among them (mlp, moe, shared_experts) rebuild at the start of the
// layer's backward. The output-discarding modules (layernorm, mla_up_proj, moe_act, and DeepSeek's
// other activations) rebuild one tensor at a time from what is kept; core_attn rebuilds the
// attention core, whose FlashAttention forward keeps nothing beyond its inputs and output, which
// the layer keeps anyway: it frees nothing.
LayerActivations module_bytes(const Plan& plan, bool moe, Recompute r) {
  const ModelConfig& m = plan.model;
  const double fp8 = stash_bytes_per_value(plan);
  // DeepSeek keeps the attention output (out-projection input) in its E5M6 format (report 3.3.3).
  const double attn_out = plan.parallel.fp8_stash ? 1.5 : kBf16;
  const double h = double(m.hidden_size), heads = double(m.num_attention_heads);
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m));
  const bool norms = r.has(Recompute::Layernorm);
  const bool eager = !plan.software.fused_elementwise;
  const double silu_out = eager && m.gated_mlp() ? kBf16 : 0.0;  // eager SwiGLU keeps silu(gate) too
  double b = kBf16 * h;                     // layer input: every recompute starts from it
  if (!norms) b += fp8 * h + kFp32;         // first RMSNorm's output (projection input) + its rstd
  if (m.is_mla()) {
    const double q_lat = double(m.q_lora_rank), kv_lat = double(m.kv_lora_rank);
    b += kBf16 * (q_lat + kv_lat);          // latents before their RMSNorms
    if (!r.has(Recompute::MlaUpProj)) {
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
  if (!norms) b += fp8 * h + kFp32;           // second RMSNorm's output + rstd
  LayerActivations a;
  if (moe) {
    const double experts = double(m.n_routed_experts), k = double(m.num_experts_per_tok);
    // FFN width a token passes through: its routed experts, DeepSeek's shared ones, Qwen's shared expert.
    const double inter = (k + double(m.n_shared_experts)) * double(m.moe_intermediate_size) +
                         double(m.shared_expert_intermediate_size);
    const double routed = k * double(m.moe_intermediate_size), shared = inter - routed;
    const bool layer = r.has(Recompute::Moe), shared_layer = layer || r.has(Recompute::SharedExperts);
    const double router = kFp32 * (2 * experts + 4 * k);  // router logits, scores, top-k weights, indices, routing maps
    // Dispatched token copies: the routed experts' gate/up input (expert TP keeps its group's rows).
    const double dispatched = fp8 * k * h * double(plan.parallel.expert_tp);
    (layer ? a.recompute_per_token : b) += router;
    (layer ? a.recompute_per_token : b) += dispatched;
    // gate/up outputs (the activation's input), then the activation's output (the down-projection's).
    if (!layer && !shared_layer) {
      b += fp8 * 2 * inter;
    } else {
      a.recompute_per_token += fp8 * 2 * (layer ? inter : shared);
      if (!layer) b += fp8 * 2 * routed;
    }
    const bool routed_out = layer || r.has(Recompute::MoeAct), shared_out = shared_layer || r.has(Recompute::OtherActs);
    if (!routed_out) b += (fp8 + silu_out) * routed;
    if (!shared_out) b += (fp8 + silu_out) * shared;
    a.recompute_per_token += (layer ? fp8 * routed : 0.0) + (shared_layer ? fp8 * shared : 0.0);
  } else {
    const double inter = double(m.intermediate_size);
    if (r.has(Recompute::Mlp)) {
      a.recompute_per_token += fp8 * 3 * inter;  // the MLP's gate/up and activation outputs, rebuilt
    } else {
      b += fp8 * 2 * inter;
      if (!r.has(Recompute::OtherActs)) b += (fp8 + silu_out) * inter;
    }
  }
  // Eager composite ops (software.fused.elementwise false) keep what their autograd nodes save beside
  // the fused kernels' outputs: each RMSNorm its FP32 input (pow, x * r) and its BF16 product before
  // the weight (* weight), RoPE the FP32 queries and keys it multiplies. SwiGLU's silu output (the
  // multiply's other input) is counted with the MLP above.
  if (eager) {
    if (!norms) b += 2 * kEagerNorm * h;
    if (m.qk_norm) b += kEagerNorm * (heads + double(m.kv_heads())) * qk;
    if (!m.is_mla() || !r.has(Recompute::MlaUpProj)) b += kFp32 * rotary_values_per_token(m);
  }
  a.saved_per_token = b;
  return a;
}

}  // namespace

double stash_bytes_per_value(const Plan& plan) { return plan.parallel.fp8_stash ? 1.0 + kFp32 / 128.0 : kBf16; }

LayerActivations layer_activations(const Plan& plan, bool moe_layer) {
  const Recompute r = plan.parallel.recompute;
  if (r == Recompute::TorchtitanOp) {  // torchtitan's save list kept; the rest rebuilt by the backward
    LayerActivations a;
    a.saved_per_token = op_sac_saved_bytes_per_token(plan.model, plan.train.precision == Precision::FP8);
    a.recompute_per_token =
        std::max(0.0, module_bytes(plan, moe_layer, Recompute::None).saved_per_token - a.saved_per_token);
    return a;
  }
  if (!r.full()) return module_bytes(plan, moe_layer, r);
  // Full: only the layer input is kept; the backward rebuilds everything the layer keeps without
  // recompute, live from its first backward op until its weight gradient is done.
  LayerActivations a;
  a.saved_per_token = kBf16 * double(plan.model.hidden_size);
  a.recompute_per_token = module_bytes(plan, moe_layer, Recompute::None).saved_per_token - a.saved_per_token;
  return a;
}

double head_activation_bytes_per_token(const ModelConfig& m) { return (kBf16 + kFp32) * double(m.vocab_size); }

double head_weight_gradient_bytes_per_token(const Plan& plan) {
  const ModelConfig& m = plan.model;
  return std::min(head_activation_bytes_per_token(m),
                  kBf16 * double(m.vocab_size) + kBf16 * double(m.hidden_size) * double(RankLayout(plan).tp()));
}

}  // namespace stepsim
