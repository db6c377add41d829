#include "vocabulary/model_params.hpp"

#include <algorithm>

namespace stepsim {

int64_t qk_head_dim(const ModelConfig& m) {
  if (m.is_mla()) return m.qk_nope_head_dim + m.qk_rope_head_dim;
  return m.head_dim > 0 ? m.head_dim : m.hidden_size / m.num_attention_heads;
}

int64_t v_head_dim(const ModelConfig& m) {
  if (m.is_mla()) return m.v_head_dim;
  return qk_head_dim(m);
}

double rotary_values_per_token(const ModelConfig& m) {
  const double heads = double(m.num_attention_heads), rope = double(m.qk_rope_head_dim);
  if (m.is_mla()) return heads * rope + rope;
  return m.rotary_pct * double(qk_head_dim(m)) * (heads + double(m.kv_heads()));
}

namespace {

AttentionParams attention_params(const ModelConfig& m) {
  AttentionParams a;
  const int64_t h = m.hidden_size, heads = m.num_attention_heads;
  const int64_t qk = qk_head_dim(m), v = v_head_dim(m);
  if (m.is_mla()) {
    if (m.q_lora_rank > 0) {
      a.q_down = h * m.q_lora_rank;
      a.q_up = m.q_lora_rank * heads * qk;
    } else {
      a.q_up = h * heads * qk;
    }
    a.kv_down = h * (m.kv_lora_rank + m.qk_rope_head_dim);
    a.kv_up = m.kv_lora_rank * heads * (m.qk_nope_head_dim + m.v_head_dim);
  } else {
    a.q_up = h * heads * qk;
    a.kv_up = h * m.kv_heads() * (qk + v);
    // Bias vectors (GPT-NeoX): one per output of each projection.
    if (m.attention_bias) a.bias = heads * qk + m.kv_heads() * (qk + v) + h;
  }
  a.out = heads * v * h;
  return a;
}

}  // namespace

ModelParams count_params(const ModelConfig& m) {
  ModelParams p;
  const int64_t h = m.hidden_size;
  p.attention = attention_params(m);
  p.recompute_per_layer = m.is_mla() ? p.attention.q_up + p.attention.kv_up : 0;
  // Two norms per layer, plus MLA's norms on the query and key-value latents; LayerNorm adds a bias
  // to each weight.
  const int64_t norm_params = m.norm == Norm::LayerNorm ? 2 : 1;
  p.norms_per_layer = norm_params * (2 * h + (m.is_mla() ? m.q_lora_rank + m.kv_lora_rank : 0));
  // SwiGLU: gate, up and down matrices; a non-gated MLP (GELU, ReLU): up and down. Biases (GPT-NeoX)
  // on the intermediate outputs and the hidden output.
  const int64_t mats = m.mlp_matrices();
  const auto mlp_bias = [&](int64_t width) { return m.mlp_bias ? (mats - 1) * width + h : 0; };
  p.dense_ffn_bias = mlp_bias(m.intermediate_size);
  p.dense_ffn = mats * h * m.intermediate_size + p.dense_ffn_bias;
  p.moe_layers = m.moe_layers();
  p.dense_layers = m.dense_layers();
  if (m.is_moe()) {
    p.expert_bias = mlp_bias(m.moe_intermediate_size);
    p.expert = mats * h * m.moe_intermediate_size + p.expert_bias;
    p.router = m.n_routed_experts * h + m.n_routed_experts;
    // DeepSeek: n_shared_experts experts of the routed width; Qwen2-MoE: one shared expert of its own width.
    const int64_t wide = m.shared_expert_intermediate_size;
    p.shared_experts_bias = m.n_shared_experts * p.expert_bias + (wide > 0 ? mlp_bias(wide) : 0);
    p.shared_experts = m.n_shared_experts * p.expert + (wide > 0 ? mats * h * wide + mlp_bias(wide) : 0);
    p.experts_per_layer = m.n_routed_experts;
    p.experts_per_token = m.num_experts_per_tok;
  }
  p.lm_head = m.vocab_size * h;
  p.embedding = m.tie_word_embeddings ? 0 : m.vocab_size * h;  // tied: one matrix, counted in the head
  p.final_norm = norm_params * h;
  return p;
}

AttentionCoreFlops attention_core_flops(const ModelConfig& m, int64_t seq_len, int64_t window) {
  // 2 FLOPs per multiply-add over the query-key pairs the mask keeps: S x S halved by the causal
  // mask (the seed's S/2 approximation; the exact (S+1)/2 is 0.02 % more at S = 4096). A sliding
  // window of W < S keys: the first W queries see a causal triangle, every later one W keys, so
  // S x W - W^2 / 2 pairs in the same approximation (S^2 / 2 at W = S).
  const double s = double(seq_len);
  const double w = window > 0 ? std::min(double(window), s) : s;
  const double pairs = s * w - w * w / 2.0;
  const double heads = double(m.num_attention_heads);
  AttentionCoreFlops f;
  f.qk = 2.0 * pairs * heads * double(qk_head_dim(m));
  f.pv = 2.0 * pairs * heads * double(v_head_dim(m));
  return f;
}

AttentionCoreFlops attention_core_flops_all_layers(const ModelConfig& m, int64_t seq_len) {
  // One window for the listed layers, the causal count for the rest.
  const double windowed = m.sliding_window > 0 ? double(m.sliding_layers.size()) : 0.0;
  const AttentionCoreFlops full = attention_core_flops(m, seq_len), window = attention_core_flops(m, seq_len, m.sliding_window);
  const double rest = double(m.num_hidden_layers) - windowed;
  return {rest * full.qk + windowed * window.qk, rest * full.pv + windowed * window.pv};
}

}  // namespace stepsim
