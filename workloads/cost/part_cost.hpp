// The per-op cost model of one layer part (workloads/deepseek/layer_work.hpp) on one GPU: every
// GEMM timed from its shape (gemm_cost), the attention core at FlashAttention's rate
// (attention_cost), memory-bound kernels from their bytes (memory_cost) and a launch cost per
// kernel (hardware.kernel_launch_s). Computed once per (layer, part) for the plan's microbatch.
#pragma once

#include "vocabulary/plan.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim::cost {

// Seconds by class: GEMMs, the attention core, memory-bound kernels, kernel launches.
struct ClassSeconds {
  double gemm = 0, attention = 0, memory = 0, launch = 0;
  double total() const { return gemm + attention + memory + launch; }
  ClassSeconds& operator+=(const ClassSeconds& o) {
    gemm += o.gemm, attention += o.attention, memory += o.memory, launch += o.launch;
    return *this;
  }
  ClassSeconds operator*(double x) const { return {gemm * x, attention * x, memory * x, launch * x}; }
};

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
PartSeconds part_seconds(const Plan& plan, const PartWork& work, const MicrobatchShape& shape);

// The optimizer step of a GPU holding `held_params` of which `shard_params` are its optimizer
// shard: memory-bound bytes (memory_cost.hpp) and a few launches.
ClassSeconds optimizer_seconds(const Plan& plan, double held_params, double shard_params);

}  // namespace stepsim::cost
