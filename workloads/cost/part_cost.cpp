#include "workloads/cost/part_cost.hpp"

#include <algorithm>

#include "workloads/cost/attention_cost.hpp"
#include "workloads/cost/gemm_cost.hpp"
#include "workloads/cost/memory_cost.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/model_params.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/routing/expert_loads.hpp"

namespace stepsim::cost {
namespace {

// Launches of the attention core: the forward kernel; the backward's preprocessing (dO . O) and
// main kernel.
int attention_launches(const Kernel& k) { return k.pass == KernelPass::InputGrad ? 2 : 1; }

}  // namespace

MicrobatchShape mean_microbatch_shape(const Plan& plan) {
  const RankLayout layout(plan);
  MicrobatchShape shape;
  shape.tokens = plan.sequences_per_microbatch() * double(plan.train.seq_len);
  // Expert TP: each GPU of an expert-TP group runs the rows of all of them, on its slice of the matrices.
  shape.routed_rows = shape.tokens * layout.token_share() * double(plan.model.num_experts_per_tok) *
                      balanced_kept_rows(plan) * double(layout.etp());
  shape.experts_per_gpu = plan.model.is_moe() ? double(plan.model.n_routed_experts) / double(layout.ep()) : 1.0;
  return shape;
}

double software_gemm_share(const Plan& plan, Precision p) {
  const SoftwareConfig& sw = plan.software;
  if (p == Precision::BF16) return sw.gemm_efficiency;
  return sw.gemm_efficiency * sw.low_precision_efficiency(plan.train.low_precision);
}

bool host_launched(const Plan& plan, OpScope scope) {
  switch (plan.software.cuda_graphs) {
    case CudaGraphs::None: return true;
    case CudaGraphs::Layers: return scope != OpScope::Layer || plan.software.cuda_graph_scope != 0;
    case CudaGraphs::FullIteration: return scope == OpScope::Optimizer;
  }
  return true;
}

bool graphed(const Plan& plan, LayerBlock block, GraphGroup group) {
  if (plan.software.cuda_graphs != CudaGraphs::Layers) return false;
  const uint8_t scope = plan.software.cuda_graph_scope;
  if (scope == 0) return true;
  switch (group) {
    case GraphGroup::MoeRouter: return scope & kGraphMoeRouter;
    case GraphGroup::MoePreprocess: return scope & kGraphMoePreprocess;
    case GraphGroup::Block: break;
  }
  // Megatron-Core's mlp scope graphs dense MLPs only (an MoE block's token counts vary).
  return block == LayerBlock::Attention ? (scope & kGraphAttn) : block == LayerBlock::Mlp && (scope & kGraphMlp);
}

double exposed_host_s(const Plan& plan, OpScope scope, double kernels, double gpu_s, double looped, double framework_s) {
  if (!(plan.sim.cost_classes & kCostLaunch) || !host_launched(plan, scope)) return 0;
  const SoftwareConfig& sw = plan.software;
  return std::max(0.0, (kernels - looped) * sw.host_launch_s + looped * sw.looped_host_launch_s() + framework_s - gpu_s);
}

double moe_host_sync_s(const Plan& plan) {
  if (plan.sim.compute == ComputeModel::SpeedOfLight || !(plan.sim.cost_classes & kCostLaunch)) return 0;
  return double(plan.software.host_syncs_per_moe_layer) * plan.software.host_launch_s;
}

PartSeconds part_seconds(const Plan& plan, const PartWork& work, const MicrobatchShape& shape, OpScope scope) {
  const HardwareConfig& hw = plan.hardware;
  const uint8_t classes = plan.sim.cost_classes;
  const RankLayout layout(plan);
  const double tp = double(layout.tp()), cp = double(layout.cp()), etp = double(layout.etp());
  const double gathered = shape.tokens / cp;    // rows of a TP-split GEMM (sequence-parallel gather)
  const double sharded = gathered / tp;         // rows of a GEMM on the GPU's token shard
  const double rows_per_expert = shape.routed_rows / shape.experts_per_gpu;
  const double launch = (classes & kCostLaunch) ? plan.software.kernel_launch_s : 0.0;
  const bool ub = layout.tp() > 1 && plan.parallel.tp_comm_overlap;
  // The experts' GEMMs launch once per local expert: without grouped GEMMs, or a grouped GEMM run
  // as a loop of them (software.grouped_gemm_per_expert), whose casts are split per expert too.
  const bool grouped = plan.parallel.moe_grouped_gemm;
  const bool launches_per_expert = !grouped || plan.software.grouped_gemm_per_expert;
  const AttentionFormat attention = attention_format(plan);  // BF16, or train.fp8_attention's format
  PartSeconds out;
  // Under scoped per-layer graphs (software.cuda_graph_scope), the kernels a graph holds cost the
  // host nothing; the graph's own launch costs one.
  const bool layer_graphs = scope == OpScope::Layer;
  ClassSeconds graph;
  for (const Kernel& k : work.kernels) {
    ClassSeconds s;
    if (k.cls == KernelClass::Attention) {
      // FLOPs of the replica's microbatch; heads split over TP, the sequence over CP.
      const double flops = k.flops / (tp * cp);
      const double d = double(qk_head_dim(plan.model) + v_head_dim(plan.model)) / 2;
      // The kernel's rate follows the keys each query reads: the CP shard of the sequence (a2a: the
      // whole sequence on 1/cp of the heads), or the sliding window where that is shorter
      // (FlashAttention skips the blocks outside it).
      const bool head_split = plan.parallel.cp_comm_type == CpCommType::A2a;
      const double local_seq = double(plan.train.seq_len) / (head_split ? 1.0 : cp);
      const double window = double(k.attention_window);
      const bool windowed = window > 0 && window < local_seq;
      // train.fp8_attention: the FP8 format's curve; a backward that does not skip the window's
      // outside tiles computes the causal count at the causal rate.
      const bool backward = k.pass == KernelPass::InputGrad;
      const double computed =
          backward && windowed ? attention_bwd_computed_flops(flops, local_seq, window, attention, hw) : flops;
      const double rate = windowed && computed == flops
                              ? window_attention_flops_per_s(window, local_seq, d, backward, hw, attention)
                              : attention_flops_per_s(local_seq, d, backward, hw, attention);
      s.attention = (classes & kCostAttention) ? computed / rate : flops / (hw.bf16_tflops * 1e12);
      s.kernels = attention_launches(k) * cp_attention_steps(plan);  // a kernel per CP step
      s.launch = launch * s.kernels;
    } else {
      for (int i = 0; i < k.gemms; ++i) {
        const GemmShape& g = k.gemm[i];
        double m = k.routed ? rows_per_expert : g.split == TpSplit::Tokens ? sharded : gathered;
        const double ways = k.routed ? etp : tp;  // routed experts split over expert TP
        double n = g.split == TpSplit::Columns ? g.n / ways : g.n;
        double kk = g.split == TpSplit::Reduction ? g.k / ways : g.k;
        // tp_comm_overlap: userbuffers run the GEMMs beside the TP collectives in pieces of the rows
        // (model_parallel_comm.hpp): the all-gather's ring exchange feeds tp chunks (the forward's
        // column-parallel GEMM, the backward's row-parallel input gradient), the forward's
        // reduce-scatter takes its row-parallel GEMM in kUbReduceScatterSplits splits.
        const bool pieces = ub && !k.routed && !k.name.starts_with("recompute");
        const double chunks = !pieces ? 1.0
                              : k.pass == KernelPass::Forward && g.split == TpSplit::Columns     ? tp
                              : k.pass == KernelPass::Forward && g.split == TpSplit::Reduction   ? double(kUbReduceScatterSplits)
                              : k.pass == KernelPass::InputGrad && g.split == TpSplit::Reduction ? tp
                                                                                                 : 1.0;
        // A GPU's experts: one grouped GEMM whose tiles share the SMs' waves, or (moe_grouped_gemm
        // false) one GEMM per expert in turn, each with its own last wave and launch.
        const double per_expert = k.routed && !plan.parallel.moe_grouped_gemm ? shape.experts_per_gpu : 1.0;
        GemmCall call{m / chunks, n, kk, k.routed ? shape.experts_per_gpu / per_expert : 1.0, k.precision};
        if (k.pass == KernelPass::InputGrad) call = {m / chunks, kk, n, call.groups, k.precision};
        if (k.pass == KernelPass::WeightGrad) call = {kk, n, m, call.groups, k.precision, 8};  // FP32 accumulation
        call.format = plan.train.low_precision;
        const double wgrad = k.pass == KernelPass::WeightGrad ? hw.gemm_wgrad_share : 1.0;
        const double seconds = per_expert / k.rate_share *
                               ((classes & kCostGemm)
                                    ? chunks * gemm_seconds(call, hw) / wgrad / software_gemm_share(plan, k.precision)
                                    : chunks * 2 * call.m * call.n * call.k * call.groups / (hw.gemm_tflops(k.precision) * 1e12));
        s.gemm += seconds;
        if (!k.routed && !k.name.starts_with("recompute")) {
          if (g.split == TpSplit::Columns) out.column.gemm += seconds;
          if (g.split == TpSplit::Reduction) out.row.gemm += seconds;
        }
      }
      s.kernels = k.gemms * (k.routed && launches_per_expert ? shape.experts_per_gpu : 1.0);
      // A grouped GEMM's loop is one framework call; without grouped GEMMs each expert is its own.
      if (grouped) s.looped = s.kernels - k.gemms;
      s.launch = launch * s.kernels;
    }
    (k.routed ? out.routed : out.tokens) += s;
    if (k.name.ends_with("shared_experts")) out.shared += s;
    if (layer_graphs && graphed(plan, work.block, k.graph)) graph.kernels += s.kernels, graph.looped += s.looped;
  }
  const bool memory = classes & kCostMemory;
  for (const MemoryOp& op : work.memory) {
    ClassSeconds tok, row;
    tok.memory = memory ? memory_seconds(op.bytes_per_token * sharded, hw) : 0.0;
    // Per routed row this GPU received (expert TP: its experts' rows / etp; an expert's intermediate
    // width is split by etp where its rows are multiplied by it, so the bytes stay per received row).
    row.memory = memory ? memory_seconds(op.bytes_per_row * shape.routed_rows / etp, hw) : 0.0;
    // Per-expert kernels (an expert's activation) launch once per expert without grouped GEMMs.
    const bool per_expert = (op.per_expert && !grouped) || (op.split_per_expert && launches_per_expert);
    tok.kernels = op.kernels * (per_expert ? shape.experts_per_gpu : 1.0) + op.kernels_per_local_expert * shape.experts_per_gpu;
    if (per_expert && grouped) tok.looped = tok.kernels - op.kernels;  // a split cast's loop
    tok.launch = launch * tok.kernels;
    if (layer_graphs && graphed(plan, work.block, op.graph)) graph.kernels += tok.kernels, graph.looped += tok.looped;
    out.tokens += tok;
    out.routed += row;
    if (op.shared_expert) out.shared += tok;
  }
  const ClassSeconds all = out.all();
  // Host work beside the kernels: the framework's own, and the calls that issue the collectives.
  const SoftwareConfig& sw = plan.software;
  // A graphed block's collectives are in its graph; the MoE block's own Python work runs unless the
  // whole layer is graphed (no scope graphs an MoE block's experts here).
  const bool block_graphed = layer_graphs && graphed(plan, work.block, GraphGroup::Block);
  double beside = work.framework_host_s;
  if (!block_graphed)
    beside += work.collective_launches * sw.host_launch_s + work.looped_collective_launches * sw.looped_host_launch_s();
  if (graph.kernels > 0 && sw.cuda_graph_scope != 0) beside += sw.host_launch_s;  // the scoped graph's replay
  out.tokens.launch +=
      exposed_host_s(plan, scope, all.kernels - graph.kernels, all.total(), all.looped - graph.looped, beside);
  return out;
}

ClassSeconds optimizer_seconds(const Plan& plan, double held_params, double shard_params) {
  const HardwareConfig& hw = plan.hardware;
  const uint8_t classes = plan.sim.cost_classes;
  ClassSeconds s;
  if (classes & kCostMemory)
    s.memory = memory_seconds(shard_params * optimizer_traffic_bytes_per_param(plan) +
                                  held_params * gradient_buffer_bytes_per_param(plan), hw);
  // Multi-tensor Adam, the gradient norm, its all-reduce's scaling and the buffer's zeroing: eager.
  s.kernels = 4;
  if (classes & kCostLaunch) s.launch = 4 * plan.software.kernel_launch_s;
  s.launch += exposed_host_s(plan, OpScope::Optimizer, s.kernels, s.total());
  return s;
}

}  // namespace stepsim::cost
