// The per-op cost model of one layer part (workloads/deepseek/layer_work.hpp) on one GPU: every
// GEMM timed from its shape (gemm_cost), the attention core at FlashAttention's rate
// (attention_cost), memory-bound kernels from their bytes (memory_cost) and the software
// profile's launch costs (software.kernel_launch_s per kernel on the GPU; software.host_launch_s
// per kernel on the host, which the op's GPU time hides unless its kernels are short). Computed
// once per (layer, part) for the plan's microbatch.
#pragma once

#include "vocabulary/plan.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim::cost {

// Seconds by class: GEMMs, the attention core, memory-bound kernels, kernel launches (the GPU's
// per-kernel cost and what of the host's an op's kernels do not hide); and the kernels counted.
struct ClassSeconds {
  double gemm = 0, attention = 0, memory = 0, launch = 0;
  double kernels = 0;  // launches (a count, not seconds: total() leaves it out)
  // Of those, the ones a C++ loop issues after the first of its group (a grouped GEMM or cast run as
  // one kernel per local expert): the host pays software.looped_launch_s for each.
  double looped = 0;
  double total() const { return gemm + attention + memory + launch; }
  ClassSeconds& operator+=(const ClassSeconds& o) {
    gemm += o.gemm, attention += o.attention, memory += o.memory, launch += o.launch, kernels += o.kernels;
    looped += o.looped;
    return *this;
  }
  ClassSeconds operator*(double x) const {
    return {gemm * x, attention * x, memory * x, launch * x, kernels * x, looped * x};
  }
};

// The share of the GPU preset's GEMM rate the software keeps for GEMMs of this number format
// (software.gemm_efficiency, times the format's fp8_efficiency, mxfp8_efficiency or nvfp4_efficiency for the quantised ones).
double software_gemm_share(const Plan& plan, Precision p);

// Where an op runs, for software.cuda_graphs: a transformer layer's part, the LM head, or the
// optimizer step (always launched by the host: no release graphs it).
enum class OpScope : uint8_t { Layer, Head, Optimizer };
// Whether the host launches each of the op's kernels (eager), or a CUDA graph holds them.
bool host_launched(const Plan& plan, OpScope scope);
// Whether a per-layer CUDA graph holds an op of a layer part's `block` in `group`
// (software.cuda_graphs layers, narrowed by software.cuda_graph_scope).
bool graphed(const Plan& plan, LayerBlock block, GraphGroup group);
// The host-bound launch model: an op whose `kernels` take `gpu_s` on the GPU (their work and the
// GPU's per-kernel cost) runs in max(gpu_s, kernels x software.host_launch_s) when the host
// launches them one by one: the host issues kernel i at i x host_launch_s, so a stream of short
// kernels waits on the host, and long ones let the host run ahead and hide it. Returns the part
// of the host's time the GPU does not hide (0 under CUDA graphs). Of the kernels, `looped` are
// issued by a C++ loop inside one framework call (Transformer Engine's per-expert GEMMs and casts),
// each costing the host software.looped_launch_s.
// `framework_s` is host time of the op's framework work that launches no kernel (PartWork::framework_host_s).
double exposed_host_s(const Plan& plan, OpScope scope, double kernels, double gpu_s, double looped = 0,
                      double framework_s = 0);

// What the host's synchronisations cost the forward dispatch of one MoE layer
// (software.host_syncs_per_moe_layer, e.g. Megatron's alltoall dispatcher copying its token counts
// to the host for the all-to-all's split sizes): each waits for the GPU to drain its queue, so the
// host's lead is gone and the GPU idles until the host issues the next kernel, host_launch_s per
// sync. Charged by the dispatcher on its forward all-to-all (workloads/model/model_program_moe.cpp);
// 0 under speed-of-light compute (no launch class), as every launch cost.
double moe_host_sync_s(const Plan& plan);

// One GPU's microbatch: the replica's tokens (TP and CP shard them), the rows its routed experts
// receive and how many experts it holds.
struct MicrobatchShape {
  double tokens = 0;
  double routed_rows = 0;
  double experts_per_gpu = 1;
};
// The mean microbatch of the plan: its tokens, the routed rows one GPU's experts run (k per token
// of its TP x CP share, times the expert-TP group's size: each runs all of the group's rows on its
// slice of the matrices) and the experts one GPU holds.
MicrobatchShape mean_microbatch_shape(const Plan& plan);

// A part's seconds, split into what scales with the microbatch's tokens, what scales with its
// routed rows, and the shared experts' share of the first (they may run apart, as their own op).
// Launches are per op and scale with neither.
struct PartSeconds {
  ClassSeconds tokens;   // everything but the routed experts' rows (shared experts included)
  ClassSeconds routed;   // routed-expert GEMMs and memory per row
  ClassSeconds shared;   // of `tokens`: the shared experts
  // Of `tokens`: the GEMMs beside a TP block's collectives, column-parallel (fed by its all-gather:
  // the q / kv projections, the MLP's first matrices) and row-parallel (reduce-scattered: the output
  // projection, the MLP's last matrix); in a backward part their input gradients. Recomputed
  // kernels are neither.
  ClassSeconds column, row;
  ClassSeconds all() const {
    ClassSeconds s = tokens;
    return s += routed;
  }
};

// `work` built by layer_work (or lm_head_passes) for the plan at `shape`'s tokens and rows.
// Classes missing from plan.sim.cost_classes cost nothing (GEMMs and attention: speed of light).
// An eager op's exposed host time is charged to `tokens.launch` (it is per op, like its launches).
PartSeconds part_seconds(const Plan& plan, const PartWork& work, const MicrobatchShape& shape,
                         OpScope scope = OpScope::Layer);

// The optimizer step of a GPU holding `held_params` of which `shard_params` are its optimizer
// shard: memory-bound bytes (memory_cost.hpp) and a few launches.
ClassSeconds optimizer_seconds(const Plan& plan, double held_params, double shard_params);

}  // namespace stepsim::cost
