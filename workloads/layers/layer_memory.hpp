// The memory-bound kernels of a layer's parts, in bytes per token (or per routed row) and kernels:
// norms, RoPE, residual adds, activations, FP8 casts, MoE routing, permutes and unpermutes, the
// embedding on layer 0 (the per-op cost model's memory-bound term). layer_work.cpp puts them beside
// the layer's GEMMs and adds what a recompute reruns.
#pragma once

#include <cstdint>
#include <string_view>

#include "vocabulary/plan.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim::layer_memory {

// BF16 activation bytes.
inline constexpr double kAct = 2;

// A layer's widths and the plan's choices its memory-bound kernels depend on.
struct MemoryShape {
  double h, f, fe, fs;    // hidden, dense FFN width, one expert's, the shared experts' together
  double rope;            // rotary dims per token (q and k)
  double latent;          // MLA's q and kv latents
  double qk_normed;       // model.qk_norm: the query and key heads' values per token, each RMS-normalised
  double attn_out;        // heads x v
  double experts;         // routed experts (router scores)
  bool router_fp32;       // parallel.moe_router_dtype fp32: the router's backward casts
  // One quantisation of a GEMM input, an activation or a gradient, for both GEMMs that read it (row-
  // and column-wise), per value: BF16 read, both copies written (the amax pass's read too).
  double quantise;
  int cast_kernels;       // its kernels
  double written;         // of which written (what a fused producer writes instead of BF16)
  // FP8 current scaling (train.fp8_recipe tensorwise): each cast first reads its tensor for the amax
  // (these bytes, in quantise), zeroing it first and turning it into the scale
  // after (amax_kernels more launches).
  double amax_read;
  int amax_kernels;
  bool gated, fp8, moe, first;
  bool eager;  // software.fused.elementwise false: norms, RoPE, the gated activation as composite ops
  // model.swiglu_limit under software.fused.clamped_glu false: the clamps and the re-joining of gate
  // and up run before the activation kernel (kClampedGluForward / kClampedGluBackward, charged
  // with the activation by activation_forward / activation_backward).
  bool clamp_apart;
  // model.mlp_bias under software.fused.expert_bias false, grouped experts: the experts' second bias
  // is added after their GEMM, per local expert (kExpertBiasForward / kExpertBiasBackward).
  bool expert_bias_apart;
  // MLA under software.fused.mla_down_proj false: the input norm writes BF16 and the q and kv down
  // projections each quantise it (two casts of h), their input gradients summed in the backward.
  bool mla_down_apart;
  // MLA under software.fused.mla_qkv false, as Megatron-Core's MLASelfAttention runs it with
  // Transformer Engine (core_v0.14.0, TE 2.7; docs/megatron-mla-audit.md):
  // - each up projection (a LayerNormLinear) quantises its normalised latent; every projection's
  //   output gradient is quantised (five: q_down, kv_down, q_up, kv_up, linear_proj), and under a
  //   recipe other than delayed scaling linear_proj saves its BF16 input and quantises it again in
  //   the backward (set_save_original_input);
  // - the fused MLA YaRN RoPE kernels (fused_mla_yarn_rope_apply.py) rotate q in place and write the
  //   whole key [heads x qk] and value [heads x v] from the up projection's output: mla_rope bytes
  //   per token in 2 kernels, again in the backward;
  // - the latent and the rotary key are copied contiguous before the up projection and the gather;
  // - under the mla_up_proj recompute, the rerun RoPE and the copies of query, key and value back
  //   into the storages the forward discarded (CheckpointWithoutOutput).
  bool mla_apart;
  double mla_rope;         // bytes per token of the two RoPE kernels
  double mla_contiguous;   // bytes per token of the contiguous copies (the rotary key's only under TP's
  int mla_contiguous_kernels;  //   sequence-parallel gather), and their kernels
  double mla_split;        // the kv down projection's output (latent and rotary key), whose split's
                           // gradient is a cat; with a fused down projection, plus the q latent
  int mla_latents;         // latents cast by up projections (no q latent without q_lora_rank)
  double mla_kv_latent;    // the kv latent's values (the recompute copies it contiguous again)
  double qkv_values;       // heads x (qk + qk + v): query, key and value as the attention reads them
  double attn_grads;       // the attention projections' output widths (gradients quantised)
  int attn_grad_tensors;   // and how many
  bool requantise_attn_out;
  bool norm_cast, activation_cast;  // software.fused: the producer writes the quantised input
  // software.fused.grouped_mlp (Transformer Engine's fused grouped MLP, ops/fused/grouped_mlp.py):
  // the experts' activation runs in the first grouped GEMM's epilogue, which writes the activation's
  // input (saved for the backward) and its output; the activation's gradient runs in the second
  // GEMM's dgrad epilogue, reading that saved input. No activation kernel either way. In MXFP8 the
  // epilogues also write the next GEMM's quantised input, both layouts (grouped_mlp_quantised), so
  // the fc2 input's and the fc1 gradient's casts go too; in NVFP4 they write BF16 and the casts stay.
  // What the epilogues still move, per routed row, charged as memory-bound bytes beside the GEMMs
  // (an upper bound: a persistent kernel overlaps part of it with its next tile's main loop), with
  // no kernel of their own. Forward: the activation's output as the second GEMM reads it (the
  // activation's input the first GEMM wrote anyway). Backward: the saved input read, its gradient
  // written (MXFP8: the dgrad and wgrad copies).
  bool grouped_mlp, grouped_mlp_quantised;
  double glu_epilogue_forward, glu_epilogue_backward;
  // Current scaling's fused norm: the norm writes BF16 and the amax, so its cast skips the amax pass.
  bool norm_amax;
  // Delayed scaling quantises every expert's rows in one kernel (Transformer Engine's split_quantize:
  // nvte_multi_cast_transpose, "only ... for FP8 delayed scaling"); other recipes launch per expert.
  bool one_split_cast;
  // An MoE layer whose tokens travel in BF16 (parallel.moe_fp8_dispatch false): the router and the
  // dispatch read the norm's BF16 output, so the experts' first GEMM quantises its input after the
  // dispatch, per routed row (Transformer Engine's GroupedLinear, split_quantize), and no norm can
  // write it. With an FP8 dispatch the tokens are quantised once each, before they leave.
  bool row_cast;
  // Megatron's alltoall dispatcher with several experts per GPU: the received rows are sorted from
  // (source GPU, expert) to (expert, source GPU) order after the dispatch and back before the combine
  // (sort_chunks_by_idxs), a pass over each row each way.
  bool sort_rows;
  // Its host-issued launches per layer forward beyond those (software.alltoall_dispatch_launches).
  int alltoall_launches;
  // parallel.moe_paged_stash: bytes per routed row of the tensors Transformer Engine's fused grouped
  // MLP saves for the backward (transformer_engine/pytorch/ops/fused/grouped_mlp.py marks them for the
  // stash: mark_grouped_tensor): both GEMMs' inputs as the GEMMs read them (column-wise only: an
  // MXFP8 byte and its E8M0 scale per 32 rows, BF16 2), the activation's input (the first GEMM's
  // BF16 output: gate and up when gated) and the routing probability (FP32: 4). Each is copied into
  // the stash after the forward and back before the backward, one Triton kernel per tensor (a block
  // format's data and scales are two): 0 without the stash.
  double paged_stash;
  int paged_stash_tensors;
  // train.fp8_attention: Transformer Engine quantises the attention's inputs before the FP8 kernel,
  // whose curve (hardware.attention_mxfp8 / _fp8) times it on inputs already quantised
  // (attention/dot_product_attention/utils.py combine_and_quantize; backends.py FusedAttnFunc).
  // MXFP8: q and k in both layouts, v in one, and in the backward dO in both, each cast reading its
  // BF16 tensor once. Per-tensor FP8: q, k and v concatenated (a copy) and cast as one, dO cast in
  // the backward. Bytes per token, and kernels; 0 without FP8 attention.
  double attention_cast_forward, attention_cast_backward;
  int attention_cast_kernels_forward, attention_cast_kernels_backward;
  // Megatron's allgather dispatcher: the experts' outputs are scattered into a buffer of the whole
  // group's tokens (zeroed, then accumulated) before its reduce-scatter: tokens of the group per
  // token of this GPU (the EP size).
  double gathered_tokens;
};

MemoryShape memory_shape(const Plan& plan, int64_t layer, bool moe);

// Bytes per value and kernels of the elementwise groups, fused (one kernel reading and writing BF16)
// or as eager PyTorch's composite ops (software.fused.elementwise false), counted from torchtitan's
// modules at 9dec370 (December 2024) and the autograd nodes they record:
// - RMSNorm, x.float() -> pow(2) -> mean -> + eps -> rsqrt -> x * r -> type_as(x) -> * weight:
//   forward 6 + 8 + 4 + 8 + 6 + 4 = 36 bytes in 8 kernels (fused: 4, one). Backward: the weight's
//   multiply (dy * w, dy * y and its sum: 12), the cast back to FP32 (6), x * r's two gradients
//   (dz * r: 8; dz * x and its sum: 16), the mean's expanded gradient (4), pow's (2x, then its
//   product: 20), the two gradients' sum (12) and the cast to BF16 (6): 84 bytes in 14 kernels
//   (fused: 6, two).
// - RoPE, view_as_complex(x.float()) * freqs, then type_as: 6 + 8 + 6 = 20 bytes a value each way,
//   queries and keys apart: 6 kernels (fused: 4, one).
// - SwiGLU, silu(gate) * up: forward 4 + 6 = 10 bytes per output value in 2 kernels (fused: 6);
//   backward dy * up, dy * silu(gate), silu's gradient: 18 in 3 (fused: 10).
struct Elementwise {
  double bytes;  // per value (an FFN value for the activation)
  int kernels;
};
Elementwise norm_forward(bool eager);
Elementwise norm_backward(bool eager);
Elementwise rope_pass(bool eager);

// A clamped GLU (GPT-OSS) as Megatron-Core runs it when the clamp is not fused
// (weighted_bias_quick_geglu_impl, megatron/core/fusions/fused_bias_geglu.py at core_v0.17.1, the
// MLP's and the experts' activation alike): before the activation's own kernel, the gate clamped
// (reads and writes its half: 4 bytes per FFN value), the up projection clamped (4), torch.cat of
// the two halves (reads and writes both: 8) and the linear offset's scalar copied to the GPU (a launch,
// no bytes): 16 bytes per FFN value in 4 kernels. Backward, through autograd: the gate's clamp
// gradient (a compare and a where: 8 bytes), the up projection's (two compares, their and, a
// where: 14), two scalar fills, and the chunk's gradient (a cat of both halves: 8): 30 in 9.
inline constexpr Elementwise kClampedGluForward{16, 4};
inline constexpr Elementwise kClampedGluBackward{30, 9};

// The gated or plain activation's kernel, with an unfused clamp's ops when the shape says so.
Elementwise activation_forward(const MemoryShape& s);
Elementwise activation_backward(const MemoryShape& s);

// The experts' second bias as Megatron-Core's TEGroupedMLP adds it when its GEMM does not
// (_apply_bias, megatron/core/transformer/moe/experts.py at core_v0.17.1; the second linear is built
// with skip_bias_add): per local expert, the bias times its rows' routing probabilities (2 bytes
// written per hidden value) and their sum with the output (reads 4, writes 2), then torch.cat of the
// experts' rows (4): 12 bytes per hidden value of a routed row, 2 kernels per local expert and 1.
// Backward, through autograd, per local expert: the bias's gradient (gradient x probability: 4,
// then its sum over the rows: 2) and the probabilities' (gradient x bias: 4, its sum over the hidden
// values: 2), 4 kernels per local expert; then the gradients of the two torch.split calls, each a
// cat (the output's rows: 4; the probabilities': a few bytes): 16 bytes and 2 kernels more. The
// forward cat's gradient is a view. Megatron-Core's SequentialMLP (no grouped GEMM) adds each
// expert's bias in its linear instead: only grouped experts pay this.
struct PerExpertElementwise {
  double bytes;  // per hidden value of a routed row
  int kernels_per_expert, kernels;
};
inline constexpr PerExpertElementwise kExpertBiasForward{12, 2, 1};
inline constexpr PerExpertElementwise kExpertBiasBackward{16, 4, 2};

// One memory-bound op: `per_token` bytes a token of the part, `per_row` a routed row.
void add(PartWork& w, std::string_view name, double per_token, double per_row = 0, int kernels = 1,
         bool shared_expert = false);
// A routed expert's own kernel (one launch per local expert without grouped GEMMs).
void add_per_expert(PartWork& w, std::string_view name, double per_row, int kernels = 1);

// Each part's memory-bound ops, forward and backward (a recompute's reruns are layer_work's).
void attention_forward_memory(PartWork& w, const MemoryShape& s);
void mlp_forward_memory(PartWork& w, const MemoryShape& s);
void attention_backward_memory(PartWork& w, const MemoryShape& s);
void mlp_backward_memory(PartWork& w, const MemoryShape& s);
// What the mla_up_proj recompute reruns of the memory-bound work: the latents' norms, and under
// MemoryShape::mla_apart their casts, the RoPE kernels and the copies of query, key and value.
void mla_up_proj_recompute_memory(PartWork& w, const MemoryShape& s);

}  // namespace stepsim::layer_memory
