// The seed article's speed-of-light model of one training step ("Working the roofline for
// DeepSeek-V3 on Hopper"): closed forms over the Plan, no simulation. Every time is per GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "vocabulary/plan.hpp"
#include "vocabulary/model_params.hpp"
#include "workloads/routing/routing_stats.hpp"

namespace stepsim {

struct ComputeTerms {
  double matmul_flops = 0;         // 6 N D over the step (whole cluster)
  double bf16_matmul_flops = 0;    // of which routers and LM head run in BF16
  double attention_flops = 0;      // attention core, causal, FlashAttention-style backward
  double recompute_flops = 0;      // what parallel.recompute reruns in backward (DeepSeek: MLA up-projections)
  double recompute_bf16_flops = 0; // of which attention core and routers, at the BF16 rate
  double model_flops = 0;          // 6ND + the attention core's forward and backward, no recompute: MFU's numerator
  double megatron_flops = 0;       // Megatron-LM's count of the same step (see megatron_flops())
  double matmul_fp8_s = 0;         // (6ND - BF16 part) at the FP8 rate; 0 under train.precision bf16
  double matmul_bf16_s = 0;        // BF16 part at the BF16 rate (every matmul under bf16)
  double bf16_correction_s = 0;    // what the BF16 part adds over the FP8 rate; 0 under bf16
  double attention_s = 0;          // at the BF16 rate
  double recompute_s = 0;          // at the GEMM precision's rate (its BF16 part at the BF16 rate)
  double sol_s = 0;                // sum of the four terms
  double sm_tax_factor = 1;        // sms / (sms - comm_sms): compute slowed by comm kernels' SMs
};

struct EpTerms {
  double remote_nodes = 0;         // remote NVLink domains a token needs (DeepEP's IB copies, node dedup)
  double ib_copies_per_token = 0;  // IB copies of each token per direction under the plan's dispatcher
  double tokens_per_gpu = 0;       // token x MoE-layer visits one GPU makes in a step
  double dispatch_bytes_per_copy = 0;  // FP8 payload + 1x128 FP32 scales
  double combine_bytes_per_copy = 0;   // BF16
  double ib_bytes_per_gpu = 0;     // sent (= received) per GPU, forward and backward
  double ib_s = 0;
  // Fat tree: the IB bytes whose rail peer sits under another leaf, at the NIC's share of the
  // leaf's uplinks (ib / oversubscription); the all-to-all takes the longer of ib_s and spine_s.
  double spine_bytes_per_gpu = 0;
  double spine_s = 0;
  double nvlink_bytes_per_gpu = 0; // upper bound: every expert copy hops once inside its NVLink domain
  double nvlink_s = 0;
  // EP group inside one node (ep <= gpus_per_node): copies go straight to their GPUs over NVLink.
  double in_node_bytes_per_gpu = 0;
  double in_node_s = 0;
  // Expert TP: the rows each all-to-all brings gathered over the expert-TP group (and the outputs
  // reduce-scattered), over NVLink: (etp - 1) x k BF16 rows per token each way.
  double etp_bytes_per_gpu = 0;
  double etp_s = 0;
};

struct DpTerms {
  double non_expert_params_per_gpu = 0;  // replicated parameters a GPU's collectives cover
  double expert_params_per_gpu = 0;      // routed-expert parameters held by one GPU
  int64_t non_expert_ib_nodes = 1;       // nodes in the hierarchical (IB) ring
  int64_t non_expert_local = 1;          // ranks of the group inside a node (NVLink stage)
  int64_t expert_ib_nodes = 1;
  int64_t expert_local = 1;
  double ring_GBps = 0;                  // IB ring rate: the NIC's, or its uplink share if an edge climbs
  double allgather_ib_bytes = 0;         // one BF16 all-gather of everything, per GPU
  double reducescatter_ib_bytes = 0;     // one FP32 reduce-scatter, per GPU
  double allgather_s = 0;
  double reducescatter_s = 0;
  double zero1_s = 0;                    // one all-gather + one reduce-scatter per step
  double fsdp_per_microbatch_s = 0;      // two all-gathers + one reduce-scatter
  double hsdp_allreduce_s = 0;           // HSDP: all-reduce of the gradient shards across shard groups, per step
};

// Tensor- and context-parallel collectives of the average GPU over the step (closed forms of
// workloads/traffic/model_parallel_comm.hpp): m microbatches x the rank's share of the layers
// (dense_layers / pp and moe_layers / pp) x collectives per layer x bytes per collective.
struct TpCpTerms {
  double tokens_per_microbatch = 0;   // tokens of one microbatch on one CP rank (gathered over TP)
  double tp_collectives = 0;          // per GPU per step
  double tp_bytes_per_collective = 0; // (tp-1)/tp x tokens x hidden x 2
  double tp_bytes_per_gpu = 0;         // with tp_qkv_bytes_per_gpu
  double tp_qkv_bytes_per_gpu = 0;     // replicated KV heads: the QKV output's all-gather and its gradient's
  double tp_link_GBps = 0;            // NVLink when a TP group fits a node, else IB
  double cp_collectives = 0;          // per GPU per step: CP exchanges (parallel.cp_comm_type), per layer
                                      // p2p 2cp - 1 (a ring step each), allgather 3, a2a 4
  double cp_bytes_per_collective = 0; // their mean: p2p and allgather move 3 x (cp-1)/cp x microbatch
                                      // tokens x K/V bytes per token of a TP rank per layer
  double cp_bytes_per_gpu = 0;
  double cp_link_GBps = 0;
};

// Megatron-LM's overlap options (parallel.tp_comm_overlap, overlap_grad_reduce,
// overlap_param_gather) in closed form: per GPU per step, the communication the compute stream
// waits for with each option off and on, beside the perfect overlap of step_time_s. TP: every TP
// block of the average pipeline rank, m / pp microbatches x (dense layers x 2 + MoE layers) / pp
// blocks; DP: the first stage's collectives, which end the step (the average stage's parameters).
struct OverlapTerms {
  // tp_comm_overlap, with c one collective's time. Off: each block's forward all-gather and
  // reduce-scatter run on the critical path (2c); in the backward, the output gradient's all-gather
  // follows the later block's input-gradient reduce-scatter, both behind the weight gradient of w
  // seconds the compute stream runs meanwhile (split_backward, W not deferred; else w = 0):
  // max(0, 2c - w). An MoE layer's attention: its all-gather waits for the dispatch-gradient
  // all-to-all, c. (The backward's re-gather overlaps the input gradient either way.) On:
  // userbuffers' pipelines (model_parallel_comm.hpp) leave ring_exchange_s(g, c, tp) - g of an
  // all-gather beside its GEMM of g (backward: less the head start w - c it gets), and
  // split_reduce_scatter_s(g', c, 4) - g' of the reduce-scatter, whose GEMM runs g' = g x sms /
  // (sms - 16) on the SMs left to it (that stretch: tp_sm_margin_s).
  double tp_exposed_off_s = 0;
  double tp_exposed_on_s = 0;
  double tp_sm_margin_s = 0;
  // overlap_grad_reduce. Off: the reduce-scatter after the last backward, all of dp.reducescatter_s.
  // On: the first stage cut in buckets of ddp_bucket_params from the model's end, each reduced
  // during the last microbatch's backward once final (B = 2F: 2/3 of a microbatch's compute through
  // the stage): what that backward cannot hide, and at least the buckets touching the first layer
  // and embedding (P - S floor((P - first) / S) of the stage's P parameters), final only at its end.
  double bucket_params = 0;
  double buckets = 0;              // ceil(the stage's parameters per GPU / bucket_params)
  double dp_reduce_exposed_off_s = 0;
  double dp_reduce_exposed_on_s = 0;
  // overlap_param_gather. Off: the all-gather after the optimizer, all of dp.allgather_s. On: the
  // buckets touching the first layer and embedding before the forward can start, the rest beside
  // the first microbatch's forward through the stage (1/3 of its compute).
  double dp_gather_exposed_off_s = 0;
  double dp_gather_exposed_on_s = 0;
  double exposed_s = 0;    // under the plan's settings (with the SM margin when tp_comm_overlap is on)
  double step_time_s = 0;  // step_time_s + exposed_s
};

struct FsdpPoint {
  int64_t microbatches = 0;
  double exposed_share = 0;  // exposed communication / step time
};

struct Roofline {
  // Inputs restated for the report.
  ModelParams params;
  int64_t activated_params = 0;
  int64_t total_params = 0;
  double tokens_per_step = 0;
  int64_t gpus = 0;
  RoutingStats routing;

  ComputeTerms terms;
  EpTerms ep;
  DpTerms dp;
  TpCpTerms tpcp;
  double compute_s = 0;        // per GPU, with the SM tax
  double ep_comm_s = 0;        // MoE dispatch + combine: over IB, or over NVLink for an EP group inside a node
  double pp_comm_s = 0;        // residual-stream sends of the busiest rank
  double pp_link_GBps = 0;     // the link those sends use
  int64_t pp_sends_per_microbatch = 0;
  double dp_comm_s = 0;        // ZeRO-1 per step, ZeRO-2 with a reduce-scatter per microbatch, or FSDP per microbatch x microbatches
  double tp_comm_s = 0;        // tensor-parallel all-gathers and reduce-scatters
  double cp_comm_s = 0;        // context-parallel K/V all-gathers and dK/dV reduce-scatters
  double comm_s = 0;           // sum of the IB terms, all assumed overlappable
  double bubble_s = 0;
  double bubble_share = 0;     // of compute
  double exposed_comm_s = 0;   // comm that compute cannot cover
  double step_time_s = 0;      // max(compute, comm) + bubble
  double tokens_per_s_per_gpu = 0;
  double ep_share_of_compute = 0;
  double reported_step_s = 0;  // train.reported_step_s, or for DeepSeek-V3 its 180K GPU-hours per trillion tokens; 0 = none
  double speedup_vs_reported = 0;
  double peak_tflops = 0;      // the GPU's datasheet dense peak at train.precision
  double mfu = 0;              // model FLOPs / (step x GPUs x peak)
  double achieved_tflops_per_gpu = 0;  // model FLOPs / step / GPUs
  std::vector<FsdpPoint> fsdp_sweep;  // the same cluster as FSDP (PP 1, ZeRO-3) at 1, 2, 4, 8, m
  OverlapTerms overlap;
};

Roofline compute_roofline(const Plan& plan);

// The step a run reported, to compare with: train.reported_step_s, or the step that the logged
// train.reported_tflops_per_gpu implies in the release's Megatron FLOP count, or for DeepSeek-V3 its
// published 180K H800 GPU-hours per trillion tokens at this batch; 0 when none applies.
double reported_step_s(const Plan& plan);
// What that step is: "reported" (train.reported_step_s), the logged TFLOP/s it was derived from
// (train.reported_tflops_per_gpu), or "DeepSeek reported".
std::string reported_step_label(const Plan& plan);

// Megatron-LM's count of a step's FLOPs (megatron/training/training.py num_floating_point_operations),
// what its logs turn into "TFLOP/s per GPU". Standard attention as Megatron-Core r0.8 counts it (the
// Megatron table's release): per layer 12 B s h^2 [(1 + g/a + s/h) a d / h + (f / h) k (3/2 for
// SwiGLU)] with g key-value heads, a heads, d head dim, f the MLP width and k experts per token (1
// for a dense layer), plus the logits 6 B s h V; the attention scores count all s^2 (no causal
// halving), no recompute. MLA as Megatron-Core v0.12 counts it (the first release that does; causal
// core halved). MoE layers count their shared experts too (v0.12's count).
double megatron_flops(const Plan& plan);

// Model FLOPs utilisation of a step of `step_s` seconds: model FLOPs / (step x GPUs x dense peak).
double mfu(const Plan& plan, const Roofline& r, double step_s);

// DeepSeek-V3 report, Table 1: 180K H800 GPU-hours per trillion training tokens.
inline constexpr double kDeepSeekGpuHoursPerTrillionTokens = 180e3;

}  // namespace stepsim
