#include "workloads/layers/layer_memory.hpp"

#include <algorithm>

#include "vocabulary/model_params.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim::layer_memory {
namespace {

// Bytes a quantisation kernel writes per value, by format: FP8 plus one FP32 scale per 128 values
// (DeepSeek-V3 report 3.3.2's 1x128 tiles; Transformer Engine's per-tensor recipes write one scale); MXFP8 and NVFP4
// both block layouts with their scales (vocabulary's block_scaled_bytes).
double quantised_bytes(LowPrecision f, Fp8Recipe recipe) {
  switch (f) {
    case LowPrecision::Fp8: return recipe == Fp8Recipe::Blockwise ? 1 + 4.0 / 128 : 1.0;  // per tensor: one scale
    case LowPrecision::Mxfp8:
    case LowPrecision::Nvfp4: return block_scaled_bytes(f);
  }
  return 1 + 4.0 / 128;
}

}  // namespace

MemoryShape memory_shape(const Plan& plan, int64_t layer, bool moe) {
  const ModelConfig& m = plan.model;
  MemoryShape s{};
  s.h = double(m.hidden_size);
  s.f = double(m.intermediate_size);
  s.fe = double(m.moe_intermediate_size);
  s.fs = double(m.n_shared_experts * m.moe_intermediate_size + m.shared_expert_intermediate_size);
  const double heads = double(m.num_attention_heads);
  const double kv_heads = double(m.kv_heads());
  s.rope = rotary_values_per_token(m);
  s.latent = m.is_mla() ? double(m.q_lora_rank + m.kv_lora_rank) : 0.0;
  s.qk_normed = m.qk_norm ? (heads + kv_heads) * double(qk_head_dim(m)) : 0.0;
  s.attn_out = heads * double(v_head_dim(m));
  s.experts = double(m.n_routed_experts);
  s.router_fp32 = plan.parallel.moe_router_dtype == RouterDtype::FP32;
  s.gated = m.gated_mlp();
  s.fp8 = plan.train.precision == Precision::FP8;
  // NVFP4 as Transformer Engine 2.12 quantises an activation or a gradient (NVFP4Quantizer, pytorch/
  // csrc/quantizer.cpp): the random Hadamard transform's amax pass (the two-level scale needs the
  // tensor's amax first), the row-wise cast, then the Hadamard-transformed column-wise cast: three
  // passes, each reading the BF16 tensor, that write both copies. FP8 and MXFP8: one read.
  const bool nvfp4 = s.fp8 && plan.train.low_precision == LowPrecision::Nvfp4;
  // FP8 current scaling as Transformer Engine 2.12 runs it (Float8CurrentScalingQuantizer::
  // quantize_impl, pytorch/csrc/quantizer.cpp): nvte_compute_amax zeroes the amax and reads the tensor
  // (common/recipe/current_scaling.cu: zero_amax_kernel, then the amax kernel), then
  // nvte_compute_scale_from_amax, then nvte_quantize_v2 casts it: one more read and three more
  // kernels per cast. Its norms (extensions/normalization.cpp, FUSED_NORM_AMAX_FP8) write BF16 and
  // the amax, and the cast follows.
  const bool per_tensor_fp8 = plan.train.fp8_recipe_applies();
  const bool current = per_tensor_fp8 && plan.train.fp8_recipe == Fp8Recipe::Tensorwise;
  s.amax_read = current ? kAct : 0.0;
  s.amax_kernels = current ? 3 : 0;
  // Every GEMM input, an activation or a gradient, feeds two GEMMs: the forward (or dgrad) reads it
  // row-wise, the wgrad column-wise. Transformer Engine quantises it once for both usages (the
  // quantizer's set_usage(rowwise, columnwise)): one kernel (NVFP4: its three passes) that reads the
  // BF16 tensor once and writes both copies. A block format's bytes hold both layouts
  // (block_scaled_bytes); per-tensor FP8 writes the transpose as a second copy only on GPUs whose FP8
  // GEMMs read one layout (Hopper: the cast-transpose kernel; quantizer.cpp skips the transpose when
  // nvte_is_non_tn_fp8_gemm_supported), and so does the blockwise recipe's 1x128 column-wise copy.
  const bool transpose_copy = per_tensor_fp8 && !plan.hardware.fp8_gemm_any_layout();
  s.written = quantised_bytes(plan.train.low_precision, plan.train.fp8_recipe) * (transpose_copy ? 2 : 1);
  s.quantise = (nvfp4 ? 3 : 1) * kAct + s.written + s.amax_read;
  s.cast_kernels = (nvfp4 ? 3 : 1) + s.amax_kernels;
  const bool block_format = s.fp8 && !per_tensor_fp8;
  s.norm_cast = s.fp8 && (block_format ? plan.software.norm_block_cast() : plan.software.fused_norm_cast) && !current;
  s.norm_amax = current && plan.software.fused_norm_cast;
  s.one_split_cast = per_tensor_fp8 && plan.train.fp8_recipe == Fp8Recipe::Delayed;
  s.activation_cast = s.fp8 && plan.software.fused_activation_cast;
  s.grouped_mlp = moe && plan.software.fused_grouped_mlp;
  s.grouped_mlp_quantised = s.grouped_mlp && plan.train.low_precision == LowPrecision::Mxfp8;
  s.glu_epilogue_forward = s.glu_epilogue_backward = 0;
  if (s.grouped_mlp) {
    const double glu = (s.gated ? 2 : 1) * s.fe;  // the first GEMM's output: gate and up
    s.glu_epilogue_forward = (s.grouped_mlp_quantised ? s.written : kAct) * s.fe;
    s.glu_epilogue_backward = kAct * glu + (s.grouped_mlp_quantised ? s.written : kAct) * glu;
  }
  s.moe = moe;
  s.first = layer == 0;
  s.eager = !plan.software.fused_elementwise;
  s.clamp_apart = m.swiglu_limit > 0 && s.gated && !plan.software.fused_clamped_glu;
  s.expert_bias_apart = moe && m.mlp_bias && !plan.software.fused_expert_bias && plan.parallel.moe_grouped_gemm &&
                        !plan.software.fused_grouped_mlp;  // the fused MLP's GEMM adds it
  const RankLayout layout(plan);
  s.mla_down_apart = m.is_mla() && !plan.software.fused_mla_down_proj;
  s.mla_apart = m.is_mla() && !plan.software.fused_mla_qkv;
  if (s.mla_apart) {
    const double rope = double(m.qk_rope_head_dim), nope = double(m.qk_nope_head_dim), qk = double(qk_head_dim(m)),
                 v = double(v_head_dim(m)), lq = double(m.q_lora_rank), lkv = double(m.kv_lora_rank);
    // q's rotary dims read and written in place; the kv up projection's output (nope + v per head)
    // and the rotary key read; the key (qk per head) and the value (v) written.
    s.mla_rope = heads * (2 * kAct * rope + kAct * (nope + v) + kAct * qk + kAct * v) + kAct * rope;
    // kv_compressed is a strided view the up projection copies; the rotary key is copied only by
    // sequence parallelism's all-gather (TP > 1).
    const bool sequence_parallel = layout.tp() > 1;
    s.mla_contiguous = 2 * kAct * (lkv + (sequence_parallel ? rope : 0.0));
    s.mla_contiguous_kernels = sequence_parallel ? 2 : 1;
    s.mla_split = lkv + rope + (s.mla_down_apart ? 0.0 : lq);
    s.mla_latents = lq > 0 ? 2 : 1;
    s.mla_kv_latent = lkv;
    s.qkv_values = heads * (2 * qk + v);
    s.attn_grads = s.h + heads * qk + heads * (nope + v) + lq + lkv + rope;
    // linear_proj, the up projections and the down projections (one when fused, Megatron-Core 0.17's
    // FusedMLASelfAttention; none for q without a q latent).
    s.attn_grad_tensors = 3 + (s.mla_down_apart ? (lq > 0 ? 2 : 1) : 1);
    s.requantise_attn_out = s.fp8 && !(per_tensor_fp8 && plan.train.fp8_recipe == Fp8Recipe::Delayed);
  } else {
    s.attn_grads = s.h + s.attn_out;  // the output projection's and the attention input's
    s.attn_grad_tensors = 2;
  }
  s.attention_cast_forward = s.attention_cast_backward = 0;
  s.attention_cast_kernels_forward = s.attention_cast_kernels_backward = 0;
  if (plan.train.runs_fp8_attention()) {
    const double qk = double(qk_head_dim(m)), vd = double(v_head_dim(m));
    const double kv = m.is_mla() ? heads : kv_heads;  // MLA's keys and values, one per query head
    const double q = heads * qk, k = kv * qk, v = kv * vd, out = heads * vd;
    if (plan.train.low_precision == LowPrecision::Mxfp8) {
      const double both = kAct + block_scaled_bytes(LowPrecision::Mxfp8);
      const double one = kAct + block_scaled_copy_bytes(LowPrecision::Mxfp8);
      s.attention_cast_forward = (q + k) * both + v * one;
      s.attention_cast_backward = out * both;
      s.attention_cast_kernels_forward = 3;
      s.attention_cast_kernels_backward = 1;
    } else {
      const double cast = kAct + 1 + s.amax_read;
      s.attention_cast_forward = (q + k + v) * (2 * kAct + cast);
      s.attention_cast_backward = out * cast;
      s.attention_cast_kernels_forward = 2 + s.amax_kernels;
      s.attention_cast_kernels_backward = 1 + s.amax_kernels;
    }
  }
  s.row_cast = moe && s.fp8 && !plan.parallel.moe_fp8_dispatch;
  const int64_t ep = layout.ep();
  const MoeDispatcher dispatcher = plan.parallel.moe_dispatcher;
  s.sort_rows = moe && dispatcher == MoeDispatcher::AllToAll && m.n_routed_experts / ep > 1;  // by local expert
  s.gathered_tokens = moe && ep > 1 && dispatcher == MoeDispatcher::AllGather ? double(ep) : 0.0;
  // The count holds the two chunk-sort maps, which one local expert does not launch.
  constexpr int kChunkSortMaps = 2;
  const int launches = int(plan.software.alltoall_dispatch_launches);
  s.alltoall_launches = moe && ep > 1 && dispatcher == MoeDispatcher::AllToAll
                            ? (s.sort_rows ? launches : std::max(0, launches - kChunkSortMaps)) : 0;
  if (moe && plan.parallel.moe_paged_stash) {
    // One layout (the column-wise copy), where a block format's cast writes two.
    const bool block = plan.train.low_precision != LowPrecision::Fp8;
    const double operand = !s.fp8                ? kAct
                           : block               ? block_scaled_copy_bytes(plan.train.low_precision)
                                                 : quantised_bytes(plan.train.low_precision, plan.train.fp8_recipe);
    s.paged_stash = operand * (s.h + s.fe) + kAct * (s.gated ? 2 : 1) * s.fe + 4;
    s.paged_stash_tensors = s.fp8 ? 6 : 4;
  }
  return s;
}

Elementwise norm_forward(bool eager) { return eager ? Elementwise{36, 8} : Elementwise{4, 1}; }
Elementwise norm_backward(bool eager) { return eager ? Elementwise{84, 14} : Elementwise{6, 2}; }
Elementwise rope_pass(bool eager) { return eager ? Elementwise{20, 6} : Elementwise{2 * kAct, 1}; }
namespace {
// The activation kernel alone, and with an unfused clamp's ops before it (MemoryShape::clamp_apart).
Elementwise with_clamp(Elementwise act, bool clamp, const Elementwise& ops) {
  return clamp ? Elementwise{act.bytes + ops.bytes, act.kernels + ops.kernels} : act;
}
}  // namespace

Elementwise activation_forward(const MemoryShape& s) {
  if (!s.gated) return {2 * kAct, 1};  // GELU reads one, writes one
  // SwiGLU reads gate and up, writes one
  return with_clamp(s.eager ? Elementwise{10, 2} : Elementwise{3 * kAct, 1}, s.clamp_apart, kClampedGluForward);
}
Elementwise activation_backward(const MemoryShape& s) {
  if (!s.gated) return {3 * kAct, 1};
  // dy, gate, up read, two gradients written
  return with_clamp(s.eager ? Elementwise{18, 3} : Elementwise{5 * kAct, 1}, s.clamp_apart, kClampedGluBackward);
}

void add(PartWork& w, std::string_view name, double per_token, double per_row, int kernels, bool shared_expert) {
  if (per_token > 0 || per_row > 0) w.memory.push_back({name, per_token, per_row, kernels, shared_expert});
}

// A routed expert's own kernel (one launch per local expert without grouped GEMMs).
void add_per_expert(PartWork& w, std::string_view name, double per_row, int kernels) {
  if (per_row > 0) w.memory.push_back({name, 0, per_row, kernels, false, true});
}


namespace {

// The experts' bias added apart from their GEMM (MemoryShape::expert_bias_apart): per routed row,
// `h` wide, from a Python loop over the local experts.
void add_expert_bias(PartWork& w, std::string_view name, const PerExpertElementwise& e, double h) {
  MemoryOp op{name, 0, e.bytes * h, e.kernels};
  op.kernels_per_local_expert = e.kernels_per_expert;
  w.memory.push_back(op);
}

// Puts the op just added as `name` in a scoped CUDA graph's group (add() skips an op of no bytes, so
// the name is checked: a skipped op tags nothing).
void in_graph(PartWork& w, std::string_view name, GraphGroup group) {
  if (!w.memory.empty() && w.memory.back().name == name) w.memory.back().graph = group;
}

// A quantisation of the routed rows, split per local expert (MemoryOp::split_per_expert) unless the
// recipe casts them all in one kernel (MemoryShape::one_split_cast).
void add_row_cast(PartWork& w, const MemoryShape& s, std::string_view name, double per_row, int kernels) {
  if (per_row > 0) {
    MemoryOp op{name, 0, per_row, kernels};
    op.split_per_expert = !s.one_split_cast;
    w.memory.push_back(op);
  }
}

// The cast of a norm's output for the GEMMs it feeds, per value and in kernels: none when the norm
// writes it (software.fused.norm_cast), the cast alone when the norm took the amax (norm_amax).
struct Cast {
  double bytes;
  int kernels;
};
Cast norm_fed_cast(const MemoryShape& s) {
  if (s.norm_cast) return {0, 0};
  if (s.norm_amax) return {s.quantise - s.amax_read, s.cast_kernels - 1};
  return {s.quantise, s.cast_kernels};
}

// MLA's latents as its up projections (norm-fused linears) cast them, per token: none unless the
// module runs them apart (MemoryShape::mla_apart).
Cast latent_casts(const MemoryShape& s) {
  if (!s.mla_apart || !s.fp8) return {0, 0};
  const Cast each = norm_fed_cast(s);
  return {each.bytes * s.latent, s.mla_latents * each.kernels};
}

// The dispatcher's own passes over the rows (MemoryShape::sort_rows, gathered_tokens); `backward`
// retraces them.
void dispatcher_memory(PartWork& w, const MemoryShape& s, bool backward) {
  if (s.sort_rows) add(w, backward ? "sort_by_expert_bwd" : "sort_by_expert", 0, 2 * 2 * kAct * s.h, 2);
  // Launches whose bytes are negligible (counts, maps, copies of a few numbers).
  if (!backward && s.alltoall_launches > 0) {
    w.memory.push_back({"alltoall_dispatch_launches", 0, 0, s.alltoall_launches});
    in_graph(w, "alltoall_dispatch_launches", GraphGroup::MoePreprocess);
  }
  // Forward: zero the group's buffer and add the rows in; backward: read the gradients back out.
  if (s.gathered_tokens > 0)
    add(w, backward ? "gathered_buffer_bwd" : "gathered_buffer", (backward ? 1 : 2) * kAct * s.h * s.gathered_tokens);
}

// A norm that feeds FP8 GEMMs writes their quantised input itself when the release fuses it
// (software.fused.norm_cast): 2h read and the format's bytes written, no separate cast of h.
double norm_bytes(const MemoryShape& s) { return s.norm_cast ? kAct * s.h + s.written * s.h : norm_forward(s.eager).bytes * s.h; }
int norm_kernels(const MemoryShape& s) { return s.norm_cast ? 1 : norm_forward(s.eager).kernels; }

}  // namespace

void attention_forward_memory(PartWork& w, const MemoryShape& s) {
  if (s.mla_down_apart)
    add(w, "attn_norm", norm_forward(s.eager).bytes * s.h, 0, norm_forward(s.eager).kernels);
  else
    add(w, "attn_norm", norm_bytes(s), 0, norm_kernels(s));
  add(w, "latent_norms", norm_forward(s.eager).bytes * s.latent, 0, 2 * norm_forward(s.eager).kernels);
  add(w, "qk_norms", norm_forward(s.eager).bytes * s.qk_normed, 0, 2 * norm_forward(s.eager).kernels);  // queries, then keys
  if (s.mla_apart) {
    add(w, "mla_rope", s.mla_rope, 0, 2);
    add(w, "mla_contiguous", s.mla_contiguous, 0, s.mla_contiguous_kernels);
  } else {
    add(w, "rope", rope_pass(s.eager).bytes * s.rope, 0, rope_pass(s.eager).kernels);
  }
  if (s.fp8) {
    // The GEMMs' inputs: the norm's output (once, or by each MLA down projection), MLA's latents
    // (their norms fused with the cast as a norm-fed one), the attention's output.
    const Cast normed = s.mla_down_apart ? Cast{2 * s.quantise, 2 * s.cast_kernels} : norm_fed_cast(s);
    const Cast latents = latent_casts(s);
    add(w, "quantise", normed.bytes * s.h + latents.bytes + s.quantise * s.attn_out, 0,
        normed.kernels + latents.kernels + s.cast_kernels);
  }
  add(w, "attention_quantise", s.attention_cast_forward, 0, s.attention_cast_kernels_forward);
  if (s.moe) {
    add(w, "router_topk", 2 * 4 * s.experts, 0, 2);  // FP32 scores: read, then the top-k's writes
    in_graph(w, "router_topk", GraphGroup::MoeRouter);
  }
  add(w, "attn_residual", 3 * kAct * s.h);
  if (s.first) add(w, "embedding", 2 * kAct * s.h);
}

void mlp_forward_memory(PartWork& w, const MemoryShape& s) {
  const Elementwise act = activation_forward(s);
  // software.fused.activation_cast: the activation writes the down projection's quantised input.
  const double act_out = s.activation_cast ? s.written - kAct : 0.0;
  const double cast_f = s.activation_cast ? 0.0 : 1.0;
  if (s.row_cast)
    add(w, "mlp_norm", norm_forward(s.eager).bytes * s.h, 0, norm_forward(s.eager).kernels);
  else
    add(w, "mlp_norm", norm_bytes(s), 0, norm_kernels(s));
  // Megatron's moe_router graph scope runs from the MLP's start to the router: its norm included.
  if (s.moe) in_graph(w, "mlp_norm", GraphGroup::MoeRouter);
  if (!s.moe) {
    add(w, "activation", (act.bytes + act_out) * s.f, 0, act.kernels);
    if (s.fp8) {
      const Cast normed = norm_fed_cast(s);
      add(w, "quantise", normed.bytes * s.h + s.quantise * cast_f * s.f, 0,
          normed.kernels + (1 - int(s.activation_cast)) * s.cast_kernels);
    }
  } else {
    add(w, "permute", 0, 2 * kAct * s.h);                      // each row gathered from its token
    add(w, "unpermute", kAct * s.h, kAct * s.h);               // rows weighted and summed into tokens
    if (s.grouped_mlp) add(w, "expert_glu_epilogue", 0, s.glu_epilogue_forward, 0);
    else add_per_expert(w, "expert_activation", (act.bytes + act_out) * s.fe, act.kernels);
    if (s.expert_bias_apart) add_expert_bias(w, "expert_bias", kExpertBiasForward, s.h);
    // The second GEMM's input is cast unless its producer writes it quantised.
    const bool fc2_cast = s.grouped_mlp ? !s.grouped_mlp_quantised : !s.activation_cast;
    if (s.row_cast) {
      add_row_cast(w, s, "expert_quantise", s.quantise * s.h, s.cast_kernels);
      add_row_cast(w, s, "expert_quantise_fc2", s.quantise * fc2_cast * s.fe, int(fc2_cast) * s.cast_kernels);
    } else if (s.fp8) {
      const Cast normed = norm_fed_cast(s);
      add(w, "quantise", normed.bytes * s.h, s.quantise * fc2_cast * s.fe, normed.kernels + int(fc2_cast) * s.cast_kernels);
    }
    dispatcher_memory(w, s, false);
    // The stash's copy reads each saved byte and writes it once (MemoryShape::paged_stash).
    add(w, "paged_stash", 0, 2 * s.paged_stash, s.paged_stash_tensors);
    add(w, "shared_activation", (act.bytes + act_out) * s.fs, 0, act.kernels, true);
    if (s.fp8) add(w, "shared_quantise", s.quantise * cast_f * s.fs, 0, s.cast_kernels, true);
  }
  add(w, "mlp_residual", 3 * kAct * s.h);
}

void attention_backward_memory(PartWork& w, const MemoryShape& s) {
  add(w, "attn_norm_bwd", norm_backward(s.eager).bytes * s.h, 0, norm_backward(s.eager).kernels);  // dy and x read, dx written; dw reduced
  add(w, "attention_quantise_bwd", s.attention_cast_backward, 0, s.attention_cast_kernels_backward);
  add(w, "latent_norms_bwd", norm_backward(s.eager).bytes * s.latent, 0, 2 * norm_backward(s.eager).kernels / (s.eager ? 1 : 2));
  add(w, "qk_norms_bwd", norm_backward(s.eager).bytes * s.qk_normed, 0, 2 * norm_backward(s.eager).kernels / (s.eager ? 1 : 2));
  if (s.mla_apart) {
    add(w, "mla_rope_bwd", s.mla_rope, 0, 2);
    add(w, "latent_grad_cat", 2 * kAct * s.mla_split);  // the down projection's split, re-joined
  } else {
    add(w, "rope_bwd", rope_pass(s.eager).bytes * s.rope, 0, rope_pass(s.eager).kernels);
  }
  // The two down projections' input gradients summed into the norm's (autograd's add).
  if (s.mla_down_apart) add(w, "down_proj_grad_sum", 3 * kAct * s.h);
  if (s.fp8) {
    // Each projection's output gradient, for its dgrad and its wgrad.
    add(w, "quantise_grads", s.quantise * s.attn_grads, 0, s.attn_grad_tensors * s.cast_kernels);
    if (s.requantise_attn_out) add(w, "attn_out_requantise", s.quantise * s.attn_out, 0, s.cast_kernels);
  }
  if (s.moe) {
    add(w, "router_bwd", 2 * 4 * s.experts);
    in_graph(w, "router_bwd", GraphGroup::MoeRouter);
    if (s.router_fp32) {
      // The FP32 router's backward (moe_utils.py): its saved BF16 input cast to FP32 for the weight
      // gradient (2 read, 4 written) and the FP32 input gradient cast back (4 read, 2 written); the
      // weight's cast to FP32 and its gradient's back are two more kernels (the experts x hidden
      // matrix, a microbatch's constant, left out of the per-token bytes).
      add(w, "router_fp32_casts", 12 * s.h, 0, 4);
      in_graph(w, "router_fp32_casts", GraphGroup::MoeRouter);
    }
  }
  add(w, "residual_grad", 3 * kAct * s.h);
  if (s.first) add(w, "embedding_bwd", kAct * s.h + 2 * 4 * s.h);  // FP32 gradient rows read and written
}

void mla_up_proj_recompute_memory(PartWork& w, const MemoryShape& s) {
  add(w, "recompute_latent_norms", norm_forward(s.eager).bytes * s.latent, 0, 2 * norm_forward(s.eager).kernels);
  if (!s.mla_apart) return;
  const Cast latents = latent_casts(s);
  add(w, "recompute_latent_quantise", latents.bytes, 0, latents.kernels);
  add(w, "recompute_kv_contiguous", 2 * kAct * s.mla_kv_latent);
  add(w, "recompute_mla_rope", s.mla_rope, 0, 2);
  add(w, "recompute_qkv_copy", 2 * kAct * s.qkv_values, 0, 3);  // read and written, one copy_ each
}

void mlp_backward_memory(PartWork& w, const MemoryShape& s) {
  const Elementwise act = activation_backward(s);
  add(w, "mlp_norm_bwd", norm_backward(s.eager).bytes * s.h, 0, norm_backward(s.eager).kernels);
  if (s.moe) in_graph(w, "mlp_norm_bwd", GraphGroup::MoeRouter);
  if (!s.moe) {
    add(w, "activation_bwd", act.bytes * s.f, 0, act.kernels);
    if (s.fp8) add(w, "quantise_grads", s.quantise * (s.h + s.f), 0, 2 * s.cast_kernels);
  } else {
    add(w, "permute_bwd", kAct * s.h, kAct * s.h);
    add(w, "unpermute_bwd", kAct * s.h, kAct * s.h);
    if (s.expert_bias_apart) add_expert_bias(w, "expert_bias_bwd", kExpertBiasBackward, s.h);
    if (s.grouped_mlp) add(w, "expert_glu_epilogue_bwd", 0, s.glu_epilogue_backward, 0);
    else add_per_expert(w, "expert_activation_bwd", act.bytes * s.fe, act.kernels);
    // The first GEMM's output gradient is cast unless the dgrad epilogue writes it quantised.
    const bool fc1_grad_cast = !s.grouped_mlp_quantised;
    if (s.row_cast) {
      // The experts' output gradients arrive per routed row, h wide (the second GEMM's), then the
      // first GEMM's, twice the width when gated; each quantised for the dgrad and the wgrad.
      add_row_cast(w, s, "expert_quantise_grads", s.quantise * s.h, s.cast_kernels);
      add_row_cast(w, s, "expert_quantise_grads_fc1", s.quantise * fc1_grad_cast * (s.gated ? 2 : 1) * s.fe,
                   int(fc1_grad_cast) * s.cast_kernels);
    } else if (s.fp8) {
      // FP8 tokens: the output gradient is cast per token before it travels (h), the first GEMM's
      // per routed row, twice the width when gated.
      add(w, "quantise_grads", s.quantise * s.h, s.quantise * fc1_grad_cast * (s.gated ? 2 : 1) * s.fe,
          (1 + int(fc1_grad_cast)) * s.cast_kernels);
    }
    dispatcher_memory(w, s, true);
    add(w, "paged_stash_reload", 0, 2 * s.paged_stash, s.paged_stash_tensors);
    add(w, "shared_activation_bwd", act.bytes * s.fs, 0, act.kernels, true);
    if (s.fp8) add(w, "shared_quantise_grads", s.quantise * s.fs, 0, s.cast_kernels, true);
  }
  add(w, "residual_grad", 3 * kAct * s.h);
}

}  // namespace stepsim::layer_memory
