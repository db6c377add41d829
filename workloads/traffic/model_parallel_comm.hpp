// Bytes of the tensor- and context-parallel collectives of one layer, the one home of these
// closed forms (the roofline and the replay both ask here).
//
// Tensor parallelism is Megatron's with sequence parallelism (Korthikanti et al., MLSys 2023):
// between blocks the [tokens, hidden] activations are split along the sequence over the TP group;
// each TP-split block (attention; a dense MLP) all-gathers its BF16 input before its column-
// parallel GEMM and reduce-scatters the output of its row-parallel GEMM. The backward mirrors it
// (all-gather of the output gradient, reduce-scatter of the input gradient). Per dense layer and
// microbatch: 4 collectives forward + 4 backward; an MoE layer only its attention's 2 + 2, since
// its experts, shared experts and router keep TP 1 (Megatron's expert TP = 1) and run on the
// sequence shard. A ring collective sends (tp - 1) / tp of the gathered tensor from every GPU.
//
// Context parallelism is Llama 3's all-gather variant (Llama 3 paper, section 3.3.2): the
// sequence is cut into 2 x cp chunks, rank i keeping chunks i and 2cp-1-i (causal load balance);
// before the attention core each rank all-gathers K and V of the whole sequence (its TP shard of
// the KV heads), and the backward reduce-scatters dK and dV. Neither overlaps the attention core
// (Llama 3: the all-gather is small next to attention, so it is left exposed).
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim {

// TP collectives of one layer for one microbatch, forward and backward together (0 without TP).
int tp_collectives_per_layer(const Plan& plan, bool moe_layer);

// Bytes one GPU sends in one TP collective over `tokens` tokens (the microbatch tokens of its CP
// rank, gathered): (tp - 1) / tp x tokens x hidden x 2 (BF16).
double tp_collective_bytes(const Plan& plan, double tokens);

// K and V of one token held by one TP rank, BF16: 2 x KV heads on the rank x head dims x 2 bytes
// (MLA: the up-projected per-head K and V, as Megatron's CP exchanges them).
double cp_kv_bytes_per_token(const Plan& plan);

// Bytes one GPU sends in one CP collective (the K/V all-gather, or the dK/dV reduce-scatter) over
// a microbatch of `tokens` tokens (the whole sequences): (cp - 1) / cp x tokens x K/V bytes.
double cp_collective_bytes(const Plan& plan, double tokens);

// CP collectives of one layer for one microbatch, forward and backward (0 without CP).
inline int cp_collectives_per_layer(const Plan& plan) { return plan.parallel.cp > 1 ? 2 : 0; }

}  // namespace stepsim
