#include "workloads/layers/layer_work.hpp"

#include <tuple>

#include "vocabulary/layer_spec.hpp"
#include "vocabulary/model_params.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/layers/op_sac.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"

namespace stepsim {

std::string_view to_string(LayerPart p) {
  static constexpr std::string_view names[] = {"attn_F", "mlp_F", "mlp_B", "attn_B", "mlp_W", "attn_W"};
  return names[int(p)];
}

double PartWork::flops(Precision p) const {
  double sum = 0;
  for (const auto& k : kernels)
    if (k.precision == p) sum += k.flops;
  return sum;
}

double PartWork::seconds(const HardwareConfig& hw) const {
  return flops(Precision::FP8) / (hw.fp8_tflops * 1e12) + flops(Precision::BF16) / (hw.bf16_tflops * 1e12) +
         nonmatmul_s;
}

namespace {

// Forward GEMM FLOPs of `params` weights over `rows` rows: one multiply-add per weight per row.
double gemm(double params, double rows) { return 2.0 * params * rows; }

// Kernel names are string_views into static storage: the recomputed copy of each forward kernel.
std::string_view recomputed_name(std::string_view forward) {
  static constexpr std::pair<std::string_view, std::string_view> names[] = {
      {"q_down", "recompute_q_down"},         {"kv_down", "recompute_kv_down"},
      {"q_up", "recompute_q_up"},             {"kv_up", "recompute_kv_up"},
      {"attn_out", "recompute_attn_out"},     {"attention_core", "recompute_attention_core"},
      {"router", "recompute_router"},         {"shared_experts", "recompute_shared_experts"},
      {"routed_experts", "recompute_routed_experts"}, {"dense_ffn", "recompute_dense_ffn"}};
  for (const auto& [f, r] : names)
    if (f == forward) return r;
  return "recompute";
}

Kernel kernel(std::string_view name, double flops, Precision p, KernelClass cls = KernelClass::Gemm,
              KernelPass pass = KernelPass::Forward) {
  Kernel k;
  k.name = name;
  k.flops = flops;
  k.precision = p;
  k.cls = cls;
  k.pass = pass;
  return k;
}

// A GEMM kernel of one or two matrices.
Kernel gemm_kernel(std::string_view name, double flops, Precision p, KernelPass pass, GemmShape a,
                   GemmShape b = {}) {
  Kernel k = kernel(name, flops, p, KernelClass::Gemm, pass);
  k.gemm[0] = a;
  k.gemm[1] = b;
  k.gemms = b.n > 0 ? 2 : 1;
  return k;
}

// BF16 activation bytes.
constexpr double kAct = 2;

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

// The memory-bound kernels of each part (the per-op cost model's bytes): norms, RoPE, residual adds,
// activations, FP8 casts, MoE routing, permutes and unpermutes, the embedding on layer 0.
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

MemoryShape memory_shape(const Plan& plan, int64_t layer, bool moe) {
  const ModelConfig& m = plan.model;
  MemoryShape s{};
  s.h = double(m.hidden_size);
  s.f = double(m.intermediate_size);
  s.fe = double(m.moe_intermediate_size);
  s.fs = double(m.n_shared_experts * m.moe_intermediate_size + m.shared_expert_intermediate_size);
  const double heads = double(m.num_attention_heads);
  const double kv_heads = double(m.kv_heads());
  s.rope = m.is_mla() ? heads * double(m.qk_rope_head_dim) + double(m.qk_rope_head_dim)
                      : m.rotary_pct * double(qk_head_dim(m)) * (heads + kv_heads);
  s.latent = m.is_mla() ? double(m.q_lora_rank + m.kv_lora_rank) : 0.0;
  s.qk_normed = m.qk_norm ? (heads + kv_heads) * double(qk_head_dim(m)) : 0.0;
  s.attn_out = heads * double(v_head_dim(m));
  s.experts = double(m.n_routed_experts);
  s.gated = m.gated_mlp();
  s.fp8 = plan.train.precision == Precision::FP8;
  s.written = quantised_bytes(plan.train.low_precision, plan.train.fp8_recipe);
  // NVFP4 as Transformer Engine 2.12 quantises an activation or a gradient (NVFP4Quantizer, pytorch/
  // csrc/quantizer.cpp): the random Hadamard transform's amax pass (the two-level scale needs the
  // tensor's amax first), the row-wise cast, then the Hadamard-transformed column-wise cast: three
  // passes, each reading the BF16 tensor, that write both copies. FP8 and MXFP8: one read; a gradient
  // is charged twice (its dgrad cast and its wgrad transpose), as two kernels.
  const bool nvfp4 = s.fp8 && plan.train.low_precision == LowPrecision::Nvfp4;
  // FP8 current scaling as Transformer Engine 2.12 runs it (Float8CurrentScalingQuantizer::
  // quantize_impl, pytorch/csrc/quantizer.cpp): nvte_compute_amax zeroes the amax and reads the tensor
  // (common/recipe/current_scaling.cu: zero_amax_kernel, then the amax kernel), then
  // nvte_compute_scale_from_amax, then nvte_quantize_v2 casts it: one more read and three more
  // kernels per cast, a gradient's included (its amax is taken once for both copies). Its norms
  // (extensions/normalization.cpp, FUSED_NORM_AMAX_FP8) write BF16 and the amax, and the cast follows.
  const bool per_tensor_fp8 = plan.train.fp8_recipe_applies();
  const bool current = per_tensor_fp8 && plan.train.fp8_recipe == Fp8Recipe::Tensorwise;
  s.amax_read = current ? kAct : 0.0;
  s.amax_kernels = current ? 3 : 0;
  const double cast = (nvfp4 ? 3 : 1) * kAct + s.written;
  s.quantise = cast + s.amax_read;
  // A gradient feeds its dgrad and, transposed, its wgrad: two copies, except per-tensor FP8 on GPUs
  // whose FP8 GEMMs read either layout (one copy serves both; quantizer.cpp: no transpose when
  // nvte_is_non_tn_fp8_gemm_supported) and NVFP4, whose three passes write both.
  const bool one_copy = nvfp4 || (per_tensor_fp8 && plan.hardware.fp8_gemm_any_layout());
  s.grad_quantise = (one_copy ? 1 : 2) * cast + s.amax_read;
  s.cast_kernels = (nvfp4 ? 3 : 1) + s.amax_kernels;
  s.grad_cast_kernels = (nvfp4 ? 3 : one_copy ? 1 : 2) + s.amax_kernels;
  const bool block_format = s.fp8 && !per_tensor_fp8;
  s.norm_cast = s.fp8 && (block_format ? plan.software.norm_block_cast() : plan.software.fused_norm_cast) && !current;
  s.norm_amax = current && plan.software.fused_norm_cast;
  s.one_split_cast = per_tensor_fp8 && plan.train.fp8_recipe == Fp8Recipe::Delayed;
  s.activation_cast = s.fp8 && plan.software.fused_activation_cast;
  s.moe = moe;
  s.first = layer == 0;
  s.eager = !plan.software.fused_elementwise;
  s.row_cast = moe && s.fp8 && !plan.parallel.moe_fp8_dispatch;
  const int64_t ep = RankLayout(plan).ep();
  const MoeDispatcher dispatcher = plan.parallel.moe_dispatcher;
  s.sort_rows = moe && ep > 1 && dispatcher == MoeDispatcher::AllToAll && m.n_routed_experts / ep > 1;
  s.gathered_tokens = moe && ep > 1 && dispatcher == MoeDispatcher::AllGather ? double(ep) : 0.0;
  s.alltoall_launches = moe && ep > 1 && dispatcher == MoeDispatcher::AllToAll
                            ? int(plan.software.alltoall_dispatch_launches) : 0;
  return s;
}

void add(PartWork& w, std::string_view name, double per_token, double per_row = 0, int kernels = 1,
         bool shared_expert = false) {
  if (per_token > 0 || per_row > 0) w.memory.push_back({name, per_token, per_row, kernels, shared_expert});
}

// A routed expert's own kernel (one launch per local expert without grouped GEMMs).
void add_per_expert(PartWork& w, std::string_view name, double per_row, int kernels = 1) {
  if (per_row > 0) w.memory.push_back({name, 0, per_row, kernels, false, true});
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

// The dispatcher's own passes over the rows (MemoryShape::sort_rows, gathered_tokens); `backward`
// retraces them.
void dispatcher_memory(PartWork& w, const MemoryShape& s, bool backward) {
  if (s.sort_rows) add(w, backward ? "sort_by_expert_bwd" : "sort_by_expert", 0, 2 * 2 * kAct * s.h, 2);
  // Launches whose bytes are negligible (counts, maps, copies of a few numbers).
  if (!backward && s.alltoall_launches > 0) w.memory.push_back({"alltoall_dispatch_launches", 0, 0, s.alltoall_launches});
  // Forward: zero the group's buffer and add the rows in; backward: read the gradients back out.
  if (s.gathered_tokens > 0)
    add(w, backward ? "gathered_buffer_bwd" : "gathered_buffer", (backward ? 1 : 2) * kAct * s.h * s.gathered_tokens);
}

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
  double bytes;
  int kernels;
};
Elementwise norm_fwd(const MemoryShape& s) { return s.eager ? Elementwise{36, 8} : Elementwise{4, 1}; }
Elementwise norm_bwd(const MemoryShape& s) { return s.eager ? Elementwise{84, 14} : Elementwise{6, 2}; }
Elementwise rope_pass(const MemoryShape& s) { return s.eager ? Elementwise{20, 6} : Elementwise{2 * kAct, 1}; }
Elementwise activation_fwd(const MemoryShape& s) {
  if (!s.gated) return {2 * kAct, 1};  // GELU reads one, writes one
  return s.eager ? Elementwise{10, 2} : Elementwise{3 * kAct, 1};  // SwiGLU reads gate and up, writes one
}
Elementwise activation_bwd(const MemoryShape& s) {
  if (!s.gated) return {3 * kAct, 1};
  return s.eager ? Elementwise{18, 3} : Elementwise{5 * kAct, 1};  // dy, gate, up read, two gradients written
}

// A norm that feeds FP8 GEMMs writes their quantised input itself when the release fuses it
// (software.fused.norm_cast): 2h read and the format's bytes written, no separate cast of h.
double norm_bytes(const MemoryShape& s) { return s.norm_cast ? kAct * s.h + s.written * s.h : norm_fwd(s).bytes * s.h; }
int norm_kernels(const MemoryShape& s) { return s.norm_cast ? 1 : norm_fwd(s).kernels; }

void attention_forward_memory(PartWork& w, const MemoryShape& s) {
  add(w, "attn_norm", norm_bytes(s), 0, norm_kernels(s));
  add(w, "latent_norms", norm_fwd(s).bytes * s.latent, 0, 2 * norm_fwd(s).kernels);
  add(w, "qk_norms", norm_fwd(s).bytes * s.qk_normed, 0, 2 * norm_fwd(s).kernels);  // queries, then keys
  add(w, "rope", rope_pass(s).bytes * s.rope, 0, rope_pass(s).kernels);
  if (s.fp8) {
    const Cast normed = norm_fed_cast(s);
    add(w, "quantise", normed.bytes * s.h + s.quantise * s.attn_out, 0, normed.kernels + s.cast_kernels);
  }
  if (s.moe) add(w, "router_topk", 2 * 4 * s.experts, 0, 2);  // FP32 scores: read, then the top-k's writes
  add(w, "attn_residual", 3 * kAct * s.h);
  if (s.first) add(w, "embedding", 2 * kAct * s.h);
}

void mlp_forward_memory(PartWork& w, const MemoryShape& s) {
  const Elementwise act = activation_fwd(s);
  // software.fused.activation_cast: the activation writes the down projection's quantised input.
  const double act_out = s.activation_cast ? s.written - kAct : 0.0;
  const double cast_f = s.activation_cast ? 0.0 : 1.0;
  if (s.row_cast)
    add(w, "mlp_norm", norm_fwd(s).bytes * s.h, 0, norm_fwd(s).kernels);
  else
    add(w, "mlp_norm", norm_bytes(s), 0, norm_kernels(s));
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
    add_per_expert(w, "expert_activation", (act.bytes + act_out) * s.fe, act.kernels);
    if (s.row_cast) {
      add_row_cast(w, s, "expert_quantise", s.quantise * s.h, s.cast_kernels);
      add_row_cast(w, s, "expert_quantise_fc2", s.quantise * cast_f * s.fe, (1 - int(s.activation_cast)) * s.cast_kernels);
    } else if (s.fp8) {
      const Cast normed = norm_fed_cast(s);
      add(w, "quantise", normed.bytes * s.h, s.quantise * cast_f * s.fe,
          normed.kernels + (1 - int(s.activation_cast)) * s.cast_kernels);
    }
    dispatcher_memory(w, s, false);
    add(w, "shared_activation", (act.bytes + act_out) * s.fs, 0, act.kernels, true);
    if (s.fp8) add(w, "shared_quantise", s.quantise * cast_f * s.fs, 0, s.cast_kernels, true);
  }
  add(w, "mlp_residual", 3 * kAct * s.h);
}

void attention_backward_memory(PartWork& w, const MemoryShape& s) {
  add(w, "attn_norm_bwd", norm_bwd(s).bytes * s.h, 0, norm_bwd(s).kernels);  // dy and x read, dx written; dw reduced
  add(w, "latent_norms_bwd", norm_bwd(s).bytes * s.latent, 0, 2 * norm_bwd(s).kernels / (s.eager ? 1 : 2));
  add(w, "qk_norms_bwd", norm_bwd(s).bytes * s.qk_normed, 0, 2 * norm_bwd(s).kernels / (s.eager ? 1 : 2));
  add(w, "rope_bwd", rope_pass(s).bytes * s.rope, 0, rope_pass(s).kernels);
  if (s.fp8) add(w, "quantise_grads", s.grad_quantise * (s.h + s.attn_out), 0, 2 * s.grad_cast_kernels);  // dgrad inputs, wgrad transposes
  if (s.moe) add(w, "router_bwd", 2 * 4 * s.experts);
  add(w, "residual_grad", 3 * kAct * s.h);
  if (s.first) add(w, "embedding_bwd", kAct * s.h + 2 * 4 * s.h);  // FP32 gradient rows read and written
}

void mlp_backward_memory(PartWork& w, const MemoryShape& s) {
  const Elementwise act = activation_bwd(s);
  add(w, "mlp_norm_bwd", norm_bwd(s).bytes * s.h, 0, norm_bwd(s).kernels);
  if (!s.moe) {
    add(w, "activation_bwd", act.bytes * s.f, 0, act.kernels);
    if (s.fp8) add(w, "quantise_grads", s.grad_quantise * (s.h + s.f), 0, 2 * s.grad_cast_kernels);
  } else {
    add(w, "permute_bwd", kAct * s.h, kAct * s.h);
    add(w, "unpermute_bwd", kAct * s.h, kAct * s.h);
    add_per_expert(w, "expert_activation_bwd", act.bytes * s.fe, act.kernels);
    if (s.row_cast) {
      // The experts' output gradients arrive per routed row, h wide (the second GEMM's), then the
      // first GEMM's, twice the width when gated; each quantised for the dgrad and the wgrad.
      add_row_cast(w, s, "expert_quantise_grads", s.grad_quantise * s.h, s.grad_cast_kernels);
      add_row_cast(w, s, "expert_quantise_grads_fc1", s.grad_quantise * (s.gated ? 2 : 1) * s.fe, s.grad_cast_kernels);
    } else if (s.fp8) {
      add(w, "quantise_grads", s.grad_quantise * s.h, s.grad_quantise * s.fe, 2 * s.grad_cast_kernels);
    }
    dispatcher_memory(w, s, true);
    add(w, "shared_activation_bwd", act.bytes * s.fs, 0, act.kernels, true);
    if (s.fp8) add(w, "shared_quantise_grads", s.grad_quantise * s.fs, 0, s.grad_cast_kernels, true);
  }
  add(w, "residual_grad", 3 * kAct * s.h);
}

// The backward's copy of the forward work it reruns: `from`'s kernels and memory-bound ops that
// `kernel` and `memory` pick, the kernels named as recomputed.
template <class KernelPick, class MemoryPick>
void rerun(PartWork& into, const PartWork& from, KernelPick kernel, MemoryPick memory) {
  for (const Kernel& k : from.kernels) {
    if (!kernel(k)) continue;
    Kernel r = k;
    r.name = recomputed_name(k.name);
    r.pass = KernelPass::Forward;
    into.kernels.push_back(r);
  }
  for (const MemoryOp& op : from.memory)
    if (memory(op)) into.memory.push_back(op);
}

}  // namespace

LayerWork layer_work(const Plan& plan, int64_t layer, double sequences, double routed_rows) {
  const ModelConfig& m = plan.model;
  const LayerSpec spec = layer_spec(plan, layer);
  const Precision gemm_precision = spec.precision;
  const ModelParams p = count_params(m);
  const AttentionParams& a = p.attention;
  const double t = sequences * double(plan.train.seq_len);
  const auto core = attention_core_flops(m, plan.train.seq_len, spec.attention_window);
  LayerWork w;
  w.moe = spec.moe;
  w.tokens = t;
  w.routed_rows = w.moe ? routed_rows : 0;
  const double nonmatmul = plan.hardware.nonmatmul_s_per_token_layer * t;
  const double h = double(m.hidden_size);
  const double heads = double(m.num_attention_heads);
  const double kv_heads = double(m.kv_heads());
  const double qk = double(qk_head_dim(m)), v = double(v_head_dim(m));

  // Attention block: F runs each projection once; B computes input gradients (same FLOPs as F)
  // and runs the FlashAttention backward (QK^T-shaped 3 more times, PV-shaped 2 more); W computes
  // weight gradients (same FLOPs as F).
  auto& af = w.parts[int(LayerPart::AttnF)];
  auto& ab = w.parts[int(LayerPart::AttnB)];
  auto& aw = w.parts[int(LayerPart::AttnW)];
  // Shapes (n outputs, k deep) of each projection; MLA's up-projections read the latents.
  const GemmShape q_up = m.is_mla() ? GemmShape{heads * qk, double(m.q_lora_rank > 0 ? m.q_lora_rank : m.hidden_size)}
                                    : GemmShape{heads * qk, h};
  const GemmShape kv_up = m.is_mla() ? GemmShape{heads * double(m.qk_nope_head_dim + m.v_head_dim), double(m.kv_lora_rank)}
                                     : GemmShape{kv_heads * (qk + v), h};
  const struct {
    std::string_view name;
    double params;
    GemmShape shape;
  } projections[] = {{"q_down", double(a.q_down), {double(m.q_lora_rank), h}},
                     {"kv_down", double(a.kv_down), {double(m.kv_lora_rank + m.qk_rope_head_dim), h}},
                     {"q_up", double(a.q_up), q_up},
                     {"kv_up", double(a.kv_up), kv_up},
                     {"attn_out", double(a.out), {h, heads * v, TpSplit::Reduction}}};
  for (const auto& pr : projections) {
    if (pr.params == 0) continue;
    af.kernels.push_back(gemm_kernel(pr.name, gemm(pr.params, t), gemm_precision, KernelPass::Forward, pr.shape));
    ab.kernels.push_back(gemm_kernel(pr.name, gemm(pr.params, t), gemm_precision, KernelPass::InputGrad, pr.shape));
    aw.kernels.push_back(gemm_kernel(pr.name, gemm(pr.params, t), gemm_precision, KernelPass::WeightGrad, pr.shape));
  }
  // The attention core in BF16, its keys per query bounded by the layer's sliding window, if any.
  const auto attention_kernel = [&](std::string_view name, double flops, KernelPass pass) {
    Kernel k = kernel(name, flops, Precision::BF16, KernelClass::Attention, pass);
    k.attention_window = spec.attention_window;
    return k;
  };
  af.kernels.push_back(attention_kernel("attention_core", sequences * core.forward(), KernelPass::Forward));
  ab.kernels.push_back(attention_kernel("attention_core_bwd", sequences * (3 * core.qk + 2 * core.pv), KernelPass::InputGrad));
  if (w.moe) {
    const GemmShape router{double(m.n_routed_experts), h, TpSplit::Tokens};
    af.kernels.push_back(gemm_kernel("router", gemm(double(p.router), t), Precision::BF16, KernelPass::Forward, router));
    ab.kernels.push_back(gemm_kernel("router", gemm(double(p.router), t), Precision::BF16, KernelPass::InputGrad, router));
    aw.kernels.push_back(gemm_kernel("router", gemm(double(p.router), t), Precision::BF16, KernelPass::WeightGrad, router));
  }
  // Non-matmul kernels: about a third in forward, two thirds in backward (DeepSeek's trace:
  // 2.7 ms of F, 5.3 ms of B per layer), split evenly between attention and MLP.
  af.nonmatmul_s = nonmatmul / 6.0;
  ab.nonmatmul_s = nonmatmul / 3.0;

  // MLP block: dense FFN, or shared experts over all tokens plus routed experts over the rows
  // this GPU's experts received. Gated MLPs run gate and up as one GEMM, then down.
  auto& mf = w.parts[int(LayerPart::MlpF)];
  auto& mb = w.parts[int(LayerPart::MlpB)];
  auto& mw = w.parts[int(LayerPart::MlpW)];
  const double in_mats = double(m.mlp_matrices() - 1);
  const auto mlp_shape = [&](double width, TpSplit first, TpSplit last) {
    return std::pair{GemmShape{in_mats * width, h, first}, GemmShape{h, width, last}};
  };
  std::vector<Kernel> mlp;
  if (w.moe) {
    if (p.shared_experts > 0) {
      const double fs = double(m.n_shared_experts * m.moe_intermediate_size + m.shared_expert_intermediate_size);
      const auto [up, down] = mlp_shape(fs, TpSplit::Tokens, TpSplit::Tokens);
      mlp.push_back(gemm_kernel("shared_experts", gemm(double(p.shared_experts - p.shared_experts_bias), t),
                                gemm_precision, KernelPass::Forward, up, down));
    }
    // Expert tensor parallelism splits them like a dense MLP, over parallel.expert_tp (part_cost).
    const auto [up, down] = mlp_shape(double(m.moe_intermediate_size), TpSplit::Columns, TpSplit::Reduction);
    Kernel routed = gemm_kernel("routed_experts", gemm(double(p.expert - p.expert_bias), w.routed_rows), gemm_precision,
                                KernelPass::Forward, up, down);
    routed.routed = true;
    mlp.push_back(routed);
  } else {
    const auto [up, down] = mlp_shape(double(m.intermediate_size), TpSplit::Columns, TpSplit::Reduction);
    mlp.push_back(gemm_kernel("dense_ffn", gemm(double(p.dense_ffn - p.dense_ffn_bias), t), gemm_precision,
                              KernelPass::Forward, up, down));
  }
  mf.kernels = mb.kernels = mw.kernels = mlp;
  for (Kernel& k : mb.kernels) k.pass = KernelPass::InputGrad;
  for (Kernel& k : mw.kernels) k.pass = KernelPass::WeightGrad;
  mf.nonmatmul_s = nonmatmul / 6.0;
  mb.nonmatmul_s = nonmatmul / 3.0;
  // The MoE block's Python-level work by pass, as counted in Megatron-Core with Transformer Engine
  // (router, dispatcher and expert calls: 17 in the forward, 21 in the input-gradient backward;
  // docs/megatron-moe-audit.md).
  if (w.moe) {
    constexpr double kForwardCalls = 17, kBackwardCalls = 21;
    mf.framework_host_s = plan.software.moe_layer_host_s * kForwardCalls / (kForwardCalls + kBackwardCalls);
    mb.framework_host_s = plan.software.moe_layer_host_s * kBackwardCalls / (kForwardCalls + kBackwardCalls);
  }

  // Memory-bound kernels (the per-op cost model).
  const MemoryShape ms = memory_shape(plan, layer, w.moe);
  attention_forward_memory(af, ms);
  mlp_forward_memory(mf, ms);
  attention_backward_memory(ab, ms);
  mlp_backward_memory(mb, ms);

  // What the backward rebuilds before it can run (recomputed kernels keep their own precision and
  // efficiency): the whole forward again under full recompute, else each recompute module's part.
  const Recompute rc = spec.recompute;
  // The host's calls that issue the blocks' TP and CP collectives (model_parallel_comm.hpp); a full
  // recompute reruns the forward's.
  const bool up_proj = rc.has(Recompute::MlaUpProj) && p.recompute_per_layer > 0 && !rc.full();
  for (const auto& [part, attention, backward] : {std::tuple{LayerPart::AttnF, true, false}, {LayerPart::AttnB, true, true},
                                                  {LayerPart::MlpF, false, false}, {LayerPart::MlpB, false, true}}) {
    const BlockLaunches l = tp_cp_block_launches(plan, attention, backward, w.moe, gemm_precision == Precision::FP8, up_proj);
    w.parts[int(part)].collective_launches = l.calls;
    w.parts[int(part)].looped_collective_launches = l.looped;
  }
  if (rc.full()) {
    rerun(ab, af, [](const Kernel&) { return true; }, [](const MemoryOp&) { return true; });
    rerun(mb, mf, [](const Kernel&) { return true; }, [](const MemoryOp&) { return true; });
    ab.collective_launches += af.collective_launches;
    ab.looped_collective_launches += af.looped_collective_launches;
    mb.collective_launches += mf.collective_launches;
    mb.looped_collective_launches += mf.looped_collective_launches;
    ab.nonmatmul_s += af.nonmatmul_s;
    mb.nonmatmul_s += mf.nonmatmul_s;
    return w;
  }
  if (rc.has(Recompute::TorchtitanOps)) {  // the unsaved GEMMs and every memory-bound op of the forward
    for (const OpSacGemm& g : op_sac_recomputed_gemms(m, plan.train.precision == Precision::FP8))
      (g.mlp ? mb : ab).kernels.push_back(gemm_kernel(g.name, 2.0 * g.shape.n * g.shape.k * t, gemm_precision,
                                                      KernelPass::Forward, g.shape));
    ab.nonmatmul_s += af.nonmatmul_s;
    mb.nonmatmul_s += mf.nonmatmul_s;
    ab.memory.insert(ab.memory.end(), af.memory.begin(), af.memory.end());
    mb.memory.insert(mb.memory.end(), mf.memory.begin(), mf.memory.end());
    return w;
  }
  // The modules rerun GEMMs and memory-bound kernels only: the calibrated non-matmul knob
  // (nonmatmul_s) stays as measured, with whatever recompute the measured run did.
  const Elementwise act = activation_fwd(ms);  // as mlp_forward_memory
  if (rc.has(Recompute::CoreAttn))  // Megatron's selective default: the attention core's forward
    ab.kernels.push_back(attention_kernel("recompute_attention_core", sequences * core.forward(), KernelPass::Forward));
  if (rc.has(Recompute::MlaUpProj) && p.recompute_per_layer > 0) {
    // The latents' RMSNorms and the q and kv up-projections. Megatron-LM's module also reapplies
    // RoPE; its memory-bound pass is not counted yet, so that DeepSeek's policy costs what it did
    // before the modules (the calibrated capture's fit is made with it).
    ab.kernels.push_back(gemm_kernel("recompute_up_proj", gemm(double(p.recompute_per_layer), t), gemm_precision,
                                     KernelPass::Forward, q_up, kv_up));
    add(ab, "recompute_latent_norms", norm_fwd(ms).bytes * ms.latent, 0, 2 * norm_fwd(ms).kernels);
  }
  if (rc.has(Recompute::Layernorm)) {  // the two pre-norms (DeepSeek: the RMSNorms, report 3.2.3)
    add(ab, "recompute_attn_norm", norm_fwd(ms).bytes * ms.h, 0, norm_fwd(ms).kernels);
    add(mb, "recompute_mlp_norm", norm_fwd(ms).bytes * ms.h, 0, norm_fwd(ms).kernels);
  }
  const auto mlp_body = [](const MemoryOp& op) { return op.name != "mlp_norm" && op.name != "mlp_residual"; };
  if (!w.moe) {
    if (rc.has(Recompute::Mlp))  // the dense MLP from its input (the pre-norm's output): GEMMs, activation
      rerun(mb, mf, [](const Kernel&) { return true; }, mlp_body);
    else if (rc.has(Recompute::OtherActs))
      add(mb, "recompute_activation", act.bytes * ms.f, 0, act.kernels);
    return w;
  }
  if (rc.has(Recompute::Moe)) {
    // The MoE layer from its input: router, permutes, experts (shared ones included); its dispatch
    // and combine go again too (workloads/model: recomputed_all_to_all).
    rerun(mb, af, [](const Kernel& k) { return k.name == "router"; }, [](const MemoryOp& op) { return op.name == "router_topk"; });
    rerun(mb, mf, [](const Kernel&) { return true; }, mlp_body);
    return w;
  }
  if (rc.has(Recompute::MoeAct)) add_per_expert(mb, "recompute_expert_activation", act.bytes * ms.fe, act.kernels);
  if (rc.has(Recompute::SharedExperts))
    rerun(mb, mf, [](const Kernel& k) { return k.name == "shared_experts"; }, [](const MemoryOp& op) { return op.shared_expert; });
  else if (rc.has(Recompute::OtherActs))
    add(mb, "recompute_shared_activation", act.bytes * ms.fs, 0, act.kernels, true);
  return w;
}

PartWork lm_head_work(const Plan& plan, double sequences) {
  const double t = sequences * double(plan.train.seq_len);
  PartWork w;
  // BF16 whatever the layers' precision (DeepSeek-V3 report 3.3.1).
  w.kernels.push_back(kernel("lm_head", gemm(double(plan.model.vocab_size * plan.model.hidden_size), t), Precision::BF16));
  return w;
}

HeadWork lm_head_passes(const Plan& plan, double sequences) {
  const ModelConfig& m = plan.model;
  const double t = sequences * double(plan.train.seq_len);
  const double flops = gemm(double(m.vocab_size * m.hidden_size), t);
  const GemmShape logits{double(m.vocab_size), double(m.hidden_size)};  // vocabulary-parallel: columns over TP
  const double h = double(m.hidden_size), vocab = double(m.vocab_size);
  HeadWork w;
  w.forward.kernels.push_back(gemm_kernel("lm_head", flops, Precision::BF16, KernelPass::Forward, logits));
  add(w.forward, "final_norm", 4 * h);
  const bool fused = plan.software.fused_cross_entropy;
  add(w.forward, "cross_entropy", (fused ? kFusedCrossEntropyForwardBytesPerLogit : kCrossEntropyForwardBytesPerLogit) * vocab,
      0, fused ? 2 : 7);
  w.input_grad.kernels.push_back(gemm_kernel("lm_head", flops, Precision::BF16, KernelPass::InputGrad, logits));
  add(w.input_grad, "cross_entropy_bwd",
      (fused ? kFusedCrossEntropyBackwardBytesPerLogit : kCrossEntropyBackwardBytesPerLogit) * vocab, 0, fused ? 1 : 2);
  add(w.input_grad, "final_norm_bwd", 6 * h, 0, 2);
  w.weight_grad.kernels.push_back(gemm_kernel("lm_head", flops, Precision::BF16, KernelPass::WeightGrad, logits));
  return w;
}

}  // namespace stepsim
