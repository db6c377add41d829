// Bytes of the tensor- and context-parallel collectives of one layer, the one home of these
// closed forms (the roofline and the replay both ask here).
//
// Tensor parallelism is Megatron's with sequence parallelism (Korthikanti et al., MLSys 2023):
// between blocks the [tokens, hidden] activations are split along the sequence over the TP group;
// each TP-split block (attention; a dense MLP) all-gathers its BF16 input before its column-
// parallel GEMM and reduce-scatters the output of its row-parallel GEMM. The backward mirrors it
// (all-gather of the output gradient, reduce-scatter of the input gradient) and all-gathers the
// block's input once more for the column-parallel weight gradient, since only the sequence shard
// was kept (Megatron's LinearWithGradAccumulationAndAsyncCommunication and Transformer Engine both
// re-gather it, asynchronously, beside the input-gradient GEMM; the reduce-scatter of the input
// gradient likewise runs beside the weight-gradient GEMM). Per dense layer and microbatch: 4
// collectives forward + 6 backward; an MoE layer only its attention's 2 + 3, since its experts,
// shared experts and router keep TP 1 (Megatron's expert TP = 1) and run on the sequence shard. A
// ring collective sends (tp - 1) / tp of the gathered tensor from every GPU.
//
// parallel.tp_comm_overlap (Megatron's --tp-comm-overlap: Transformer Engine's userbuffers, with
// the defaults of TE's initialize_ub) pipelines the three collectives that otherwise sit on the
// critical path with the GEMM beside them:
// - the forward all-gather of the input and the backward all-gather of the output gradient run as
//   a ring exchange (method ring_exchange, tp chunks, copy engines: no SMs): the GEMM starts on the
//   local chunk while the next chunk arrives, so of a GEMM of g s and an all-gather of c s
//   (tp - 1 chunks of c / (tp - 1)) the pair takes g/tp + (tp - 1) max(g/tp, c/(tp - 1));
// - the forward reduce-scatter of the row-parallel GEMM's output runs split in 4 (method pipeline,
//   num_splits 4): each quarter of the GEMM is reduce-scattered while the next one computes, so the
//   pair takes g'/4 + 3 max(g'/4, c/4) + c/4, where the GEMM runs on the SMs the reduce-scatter
//   kernel leaves it (num_sm 16, set_sm_margin): g' = g x sms / (sms - 16).
// The backward's re-gather and input-gradient reduce-scatter overlap their GEMMs either way (TE's
// bulk methods with the option, asynchronous NCCL without).
//
// Context parallelism as Megatron-Core runs it through Transformer Engine's attention with CP
// (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py), by
// parallel.cp_comm_type. The sequence is cut into 2 x cp chunks, rank i keeping chunks i and
// 2cp-1-i (causal load balance); c below is the K/V all-gather's bytes, (cp - 1) / cp of the
// microbatch's K and V on a TP rank, and g the attention core's time:
// - p2p (AttnFuncWithCPAndKVP2P, Megatron's default): the attention runs as cp kernels (steps), each
//   beside the exchange that brings the next step's K/V from the ring neighbour (c / (cp - 1)), each
//   exchange forwarding what the one before brought, so a slow hop paces the whole ring. Forward:
//   cp - 1 exchanges, c in all; with equal steps (cp-1) max(g/cp, c/(cp-1)) + g/cp. Backward: K/V
//   travel again with the dK/dV accumulated so far, which each exchange takes from the step before
//   (the first sends K/V alone, the last dK/dV alone, home): cp exchanges, 2c in all, and what
//   follows waits for the last;
// - allgather (AttnFuncWithCPAndKVAllGather): K and V all-gathered before the core, in the
//   forward and again in the backward (the gathered copy is not kept), dK and dV reduce-scattered
//   after the backward's core; none of it beside the attention (3c);
// - a2a (AttnFuncWithCPAndQKVOA2A, DeepSpeed-Ulysses): an all-to-all turns Q, K and V from a
//   sequence split into a head split before the core, which then runs the whole sequence on 1/cp
//   of the heads, and another turns its output back; the backward the same with dO and dQ, dK, dV.
//   Each all-to-all sends (cp - 1) / cp of the tensors' bytes on this GPU.
#pragma once

#include <string_view>
#include <vector>

#include "vocabulary/plan.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {

// TP collectives of one layer for one microbatch, forward and backward together (0 without TP).
int tp_collectives_per_layer(const Plan& plan, bool moe_layer);

// The share of a layer kernel's FLOPs (workloads/layers/layer_work.hpp, by name) that is the
// column-parallel GEMM fed by its block's TP all-gather (the attention's q and kv projections, the
// dense MLP's gate and up) and the row-parallel GEMM whose output is reduce-scattered (the attention
// output projection, the dense MLP's down); in a backward part their input gradients. Recomputed
// kernels, the attention core, routers and experts are neither.
struct TpGemmShare {
  double column = 0, row = 0;
};
TpGemmShare tp_gemm_share(const Plan& plan, std::string_view kernel);

// Transformer Engine's userbuffers defaults (initialize_ub): the reduce-scatter overlapped with its
// GEMM runs in this many splits, on this many SMs the GEMM gives up while it runs.
inline constexpr int64_t kUbReduceScatterSplits = 4;
inline constexpr int64_t kUbCommSms = 16;

// Seconds from the start of a GEMM of `gemm_s` fed by a ring-exchange all-gather of `comm_s` (the
// whole collective's time) over `tp` ranks to the end of both: g/tp + (tp-1) max(g/tp, c/(tp-1)).
double ring_exchange_s(double gemm_s, double comm_s, int64_t tp);
// Seconds from the start of a GEMM of `gemm_s` split in `splits`, each split reduce-scattered (a
// share of `comm_s`) as it ends, to the end of the last reduce-scatter: g/n + (n-1) max(g/n, c/n) + c/n.
double split_reduce_scatter_s(double gemm_s, double comm_s, int64_t splits);
// What a GEMM beside userbuffers' reduce-scatter takes for the SMs it gives up: sms / (sms - 16).
double ub_gemm_stretch(const HardwareConfig& hw);

// Bytes of userbuffers' staging buffers on every GPU under tp_comm_overlap: TE registers one per
// overlapped GEMM (qkv, proj, fc1, fc2 forward; their input and weight gradients: 10), each of the
// microbatch's tokens on one CP rank x hidden, 1 byte for the six all-gather buffers under FP8
// (fp8_buf) and 2 otherwise. 0 without TP or without the option.
double ub_buffer_bytes(const Plan& plan, double tokens);

// Bytes one GPU sends in one TP collective over `tokens` tokens (the microbatch tokens of its CP
// rank, gathered): (tp - 1) / tp x tokens x hidden x 2 (BF16).
double tp_collective_bytes(const Plan& plan, double tokens);

// K and V of one token held by one TP rank, BF16: 2 x KV heads on the rank x head dims x 2 bytes
// (MLA: the up-projected per-head K and V, as Megatron's CP exchanges them).
double cp_kv_bytes_per_token(const Plan& plan);

// Bytes one GPU sends in one K/V all-gather or dK/dV reduce-scatter (c above; p2p's ring sends the
// same in a pass) over a microbatch of `tokens` tokens (the whole sequences):
// (cp - 1) / cp x tokens x K/V bytes.
double cp_collective_bytes(const Plan& plan, double tokens);

// a2a: bytes one GPU sends in the all-to-all of Q, K and V (`qkv`), or of the attention's output,
// over a microbatch of `tokens` tokens: (cp - 1) / cp x tokens / cp x their bytes per token on a TP
// rank (BF16; the backward's gradients the same).
double cp_a2a_bytes(const Plan& plan, double tokens, bool qkv);

// The CP exchanges of one pass of a layer's attention for one microbatch (the forward's, or the
// backward's), in the order they run: what each moves and the bytes one GPU sends in it; p2p's
// ring one per step. The replay emits them, the roofline and the host's call count read them.
enum class CpExchange : uint8_t { KvAllGather, DkvReduceScatter, KvRing, KvDkvRing, DkvRing, QkvAllToAll, OutAllToAll };
struct CpExchangeBytes {
  CpExchange what;
  double bytes;
};
std::vector<CpExchangeBytes> cp_exchanges(const Plan& plan, double tokens, bool backward);

// Attention kernels one pass of the attention core runs as under CP: p2p one per ring step (cp),
// allgather one per local chunk (2), a2a and no CP 1.
int cp_attention_steps(const Plan& plan);

// Fewer key-value heads than TP ranks (Megatron, megatron/core/transformer/attention.py: allowed
// when the KV heads divide tp): each rank computes 1/tp of the QKV projection's columns, then
// all-gathers that projection's whole output over TP and keeps one KV head (and its query heads),
// so every KV head is held by tp / kv ranks. How many ranks hold each KV head (1 when they split).
int64_t kv_head_replicas(const Plan& plan);

// The all-gather of the QKV projection's output that replicated KV heads add to the attention's
// forward, and the reduce-scatter of its gradient in the backward: collectives per attention
// layer and microbatch (0 when KV heads split over TP), and the bytes one GPU sends in one over
// `tokens` tokens: (tp - 1) / tp x tokens x (heads + 2 x KV heads) x head_dim x 2 (BF16).
int tp_qkv_collectives_per_layer(const Plan& plan);
double tp_qkv_collective_bytes(const Plan& plan, double tokens);

// Launches the host makes for one block's TP and CP collectives in one pass of a microbatch (the
// replay times their transfers as communication; these are the calls that issue them). Without
// tp_comm_overlap each TP collective of sequence parallelism is a framework call (Megatron's
// mappings, Transformer Engine's gather_along_first_dim); under it userbuffers issue them inside the
// GEMM's C++ call, so none are counted. A CP collective is a call either way. FP8 current scaling
// (train.fp8_recipe tensorwise) all-reduces over TP the amax of each sequence-parallel tensor it casts
// (a column-parallel layer's input, a row-parallel layer's output gradient): an NCCL launch from the
// cast's C++ (`looped`). Per block: attention F 2 (AG, RS), B 3 (AG of the output gradient, RS of the
// input gradient, the input gathered again for the weight gradient), +1 each way for replicated KV
// heads; a dense MLP the same 2 and 3; an MoE block none (experts at expert TP 1). MLA
// (docs/megatron-mla-audit.md, Megatron-Core 0.14): F gathers the rope key and each latent apart and
// reduce-scatters the output (4; 3 without a query latent); B gathers the output gradient,
// reduce-scatters each latent's and the rope key's input gradient and gathers the latents again for
// their weight gradients (6; 5), and recomputing the up-projections (`recompute_up_proj`) gathers the
// latents once more.
struct BlockLaunches {
  double calls = 0, looped = 0;
};
BlockLaunches tp_cp_block_launches(const Plan& plan, bool attention, bool backward, bool moe_layer, bool fp8_layer,
                                   bool recompute_up_proj);


}  // namespace stepsim
