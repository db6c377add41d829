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
  double quantise;        // bytes of one quantisation, per value: BF16 read, the format's written
  double grad_quantise;   // of a gradient's, for its dgrad and its wgrad copies
  int cast_kernels;       // kernels per quantised tensor in the forward
  int grad_cast_kernels;  // and per gradient
  double written;         // of which written (what a fused producer writes instead of BF16)
  // FP8 current scaling (train.fp8_recipe tensorwise): each cast first reads its tensor for the amax
  // (these bytes, in quantise and grad_quantise), zeroing it first and turning it into the scale
  // after (amax_kernels more launches).
  double amax_read;
  int amax_kernels;
  bool gated, fp8, moe, first;
  bool eager;  // software.fused.elementwise false: norms, RoPE, the gated activation as composite ops
  bool norm_cast, activation_cast;  // software.fused: the producer writes the quantised input
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
Elementwise activation_forward(bool gated, bool eager);
Elementwise activation_backward(bool gated, bool eager);

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

}  // namespace stepsim::layer_memory
