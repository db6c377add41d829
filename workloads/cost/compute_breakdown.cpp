#include "workloads/cost/compute_breakdown.hpp"

#include <algorithm>

#include "schedules/registry.hpp"
#include "workloads/layers/kernel_efficiency.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/memory/state_bytes.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/model_params.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim::cost {
namespace {

// A part at speed of light, split as the predicted model splits it; `row`: the row-parallel GEMMs'
// share of it (the GEMMs beside a TP block's reduce-scatter, tp_gemm_share).
ClassSeconds speed_of_light(const Plan& plan, const PartWork& w, LayerPart part, double split, double& row) {
  const HardwareConfig& hw = plan.hardware;
  ClassSeconds s;
  row = 0;
  for (const Kernel& k : w.kernels) {
    const double seconds = k.flops / kernel_efficiency(k, part, hw) / (hw.gemm_tflops(k.precision) * 1e12) / split;
    (k.cls == KernelClass::Attention ? s.attention : s.gemm) += seconds;
    row += seconds * tp_gemm_share(plan, k.name).row;
  }
  s.memory = w.nonmatmul_s / split;
  return s;
}

}  // namespace

ComputeBreakdown compute_breakdown(const Plan& plan, int64_t pipeline_rank) {
  ComputeBreakdown b;
  b.model = plan.sim.compute;
  b.pipeline_rank = pipeline_rank;
  const ModelConfig& m = plan.model;
  const auto schedule = sched::make_schedule(plan);
  const std::vector<StageLayers> stages = partition_layers(plan);
  const bool fsdp = schedule->shards_parameters();
  // The layers (with their chunk) and head the rank runs per microbatch.
  std::vector<std::pair<int32_t, int64_t>> layers;
  int64_t head = 0;
  const int32_t chunks = schedule->chunks_per_rank();
  std::vector<bool> head_in(size_t(chunks), false);
  for (int32_t c = 0; c < chunks; ++c) {
    const StageLayers& s = stages[size_t(schedule->layer_slot(schedule->stage_of(fsdp ? 0 : pipeline_rank, c)))];
    for (int64_t l = s.first; l < s.first + s.count; ++l) layers.push_back({c, l});
    head += s.has_lm_head ? 1 : 0;
    head_in[size_t(c)] = s.has_lm_head;
  }
  // parallel.split_lone_chunks: a forward or backward chunk of MoE layers that runs alone runs as
  // two half-microbatches, each launching every kernel of the chunk (ModelGpuProgram::split_lone):
  // per chunk, the launches of its passes, and whether it is split.
  struct ChunkLaunches {
    double forward = 0, input_grad = 0, weight_grad = 0;
    bool moe = false;
  };
  std::vector<ChunkLaunches> launches(static_cast<size_t>(chunks), ChunkLaunches{});
  b.microbatches = double(schedule->microbatches_per_chunk());
  const double seqs = plan.sequences_per_microbatch();
  const MicrobatchShape shape = mean_microbatch_shape(plan);
  const RankLayout layout(plan);
  const bool predicted = plan.sim.compute == ComputeModel::Predicted;
  const double split = double(layout.token_split());
  // Each kind's mean layer (layer 0 also holds the embedding).
  KindCost kinds[2] = {{"dense layer", 0, {}, {}, {}}, {"MoE layer", 0, {}, {}, {}}};
  // parallel.tp_comm_overlap: a TP block's forward row-parallel GEMM runs on the SMs userbuffers'
  // reduce-scatter leaves it (ub_gemm_stretch), as the replay charges it (ModelGpuProgram::block).
  const bool ub = layout.tp() > 1 && plan.parallel.tp_comm_overlap;
  const double stretch = ub ? ub_gemm_stretch(plan.hardware) : 1.0;
  for (const auto& [chunk, l] : layers) {
    const bool moe = m.is_moe_layer(l);
    KindCost& k = kinds[moe ? 1 : 0];
    const LayerWork w = layer_work(plan, l, seqs, moe ? shape.routed_rows : 0.0);
    const auto part = [&](LayerPart p) {
      double row = 0;
      ClassSeconds s;
      if (predicted) {
        const PartSeconds ps = part_seconds(plan, w.part(p), shape);
        s = ps.all();
        row = ps.row.gemm;
      } else {
        s = speed_of_light(plan, w.part(p), p, split, row);
      }
      // Experts, shared experts and routers keep TP 1: an MoE layer's MLP is no TP block.
      const bool tp_block = p == LayerPart::AttnF || (p == LayerPart::MlpF && !moe);
      if (ub && tp_block) {
        const double margin = (stretch - 1.0) * row;
        s.gemm += margin;
        b.ub_sm_margin_s += margin * b.microbatches;
      }
      return s;
    };
    ClassSeconds f = part(LayerPart::AttnF), i = part(LayerPart::AttnB), wg = part(LayerPart::AttnW);
    f += part(LayerPart::MlpF), i += part(LayerPart::MlpB), wg += part(LayerPart::MlpW);
    k.forward += f, k.input_grad += i, k.weight_grad += wg;
    ChunkLaunches& cl = launches[size_t(chunk)];
    cl.forward += f.launch, cl.input_grad += i.launch, cl.weight_grad += wg.launch;
    cl.moe = cl.moe || moe;
    ++k.on_rank;
  }
  for (KindCost& k : kinds) {
    if (k.on_rank == 0) continue;
    b.step += k.total() * b.microbatches;
    const double per_layer = 1.0 / double(k.on_rank);
    k.forward = k.forward * per_layer, k.input_grad = k.input_grad * per_layer, k.weight_grad = k.weight_grad * per_layer;
    b.kinds.push_back(k);
  }
  if (head > 0) {
    KindCost k{"LM head", head, {}, {}, {}};
    if (predicted) {
      const HeadWork w = lm_head_passes(plan, seqs);
      k.forward = part_seconds(plan, w.forward, shape, OpScope::Head).all();
      k.input_grad = part_seconds(plan, w.input_grad, shape, OpScope::Head).all();
      k.weight_grad = part_seconds(plan, w.weight_grad, shape, OpScope::Head).all();
    } else {
      // The LM head runs at the large-GEMM efficiency (ModelWorkload), each of its three passes.
      k.forward.gemm = lm_head_work(plan, seqs).flops(Precision::BF16) / plan.hardware.gemm_efficiency /
                       (plan.hardware.bf16_tflops * 1e12) / split;
      k.input_grad = k.weight_grad = k.forward;
    }
    b.kinds.push_back(k);
    b.step += k.total() * (double(head) * b.microbatches);
    for (int32_t c = 0; c < chunks; ++c)
      if (head_in[size_t(c)]) {
        ChunkLaunches& cl = launches[size_t(c)];
        cl.forward += k.forward.launch, cl.input_grad += k.input_grad.launch, cl.weight_grad += k.weight_grad.launch;
      }
  }
  if (plan.parallel.split_lone_chunks && !fsdp) {
    for (const sched::ChunkOp& op : schedule->program(pipeline_rank)) {
      if (op.pass == sched::Pass::F && launches[size_t(op.fwd.chunk)].moe)
        b.lone_halves_launch_s += launches[size_t(op.fwd.chunk)].forward;
      if (op.pass == sched::Pass::B && launches[size_t(op.bwd.chunk)].moe)
        b.lone_halves_launch_s += launches[size_t(op.bwd.chunk)].input_grad +
                                  (op.zero_bubble ? 0.0 : launches[size_t(op.bwd.chunk)].weight_grad);
    }
    b.step.launch += b.lone_halves_launch_s;
  }
  if (predicted && schedule->optimizer_step()) {
    // The shard of what the rank holds, as ModelGpuProgram's optimizer op charges it.
    const ModelParams p = count_params(m);
    const HeldParams held = fsdp ? model_held_params(plan, p) : rank_held_params(plan, p, *schedule, stages, pipeline_rank);
    KindCost k{"optimizer step", 1, {}, {}, {}};
    k.forward = optimizer_seconds(plan, held.non_expert + held.expert, zero_shard_params(plan, held));
    b.kinds.push_back(k);
    b.step += k.forward;
  }
  return b;
}

}  // namespace stepsim::cost
