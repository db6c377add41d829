#include "workloads/cost/compute_breakdown.hpp"

#include <algorithm>

#include "schedules/registry.hpp"
#include "workloads/layers/kernel_efficiency.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/memory/state_bytes.hpp"
#include "vocabulary/model_params.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim::cost {
namespace {

// A part at speed of light, split as the predicted model splits it.
ClassSeconds speed_of_light(const Plan& plan, const PartWork& w, LayerPart part, double split) {
  const HardwareConfig& hw = plan.hardware;
  ClassSeconds s;
  for (const Kernel& k : w.kernels) {
    const double seconds = k.flops / kernel_efficiency(k, part, hw) / (hw.gemm_tflops(k.precision) * 1e12) / split;
    (k.cls == KernelClass::Attention ? s.attention : s.gemm) += seconds;
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
  // The layers and head the rank runs per microbatch.
  std::vector<int64_t> layers;
  int64_t head = 0;
  for (int32_t c = 0; c < schedule->chunks_per_rank(); ++c) {
    const StageLayers& s = stages[size_t(schedule->layer_slot(schedule->stage_of(fsdp ? 0 : pipeline_rank, c)))];
    for (int64_t l = s.first; l < s.first + s.count; ++l) layers.push_back(l);
    head += s.has_lm_head ? 1 : 0;
  }
  b.microbatches = double(schedule->microbatches_per_chunk());
  const double seqs = plan.sequences_per_microbatch();
  const MicrobatchShape shape = mean_microbatch_shape(plan);
  const RankLayout layout(plan);
  const bool predicted = plan.sim.compute == ComputeModel::Predicted;
  const double split = double(layout.token_split());
  // Each kind's mean layer (layer 0 also holds the embedding).
  KindCost kinds[2] = {{"dense layer", 0, {}, {}, {}}, {"MoE layer", 0, {}, {}, {}}};
  for (const int64_t l : layers) {
    const bool moe = m.is_moe_layer(l);
    KindCost& k = kinds[moe ? 1 : 0];
    const LayerWork w = layer_work(plan, l, seqs, moe ? shape.routed_rows : 0.0);
    const auto part = [&](LayerPart p) {
      return predicted ? part_seconds(plan, w.part(p), shape).all() : speed_of_light(plan, w.part(p), p, split);
    };
    k.forward += part(LayerPart::AttnF), k.forward += part(LayerPart::MlpF);
    k.input_grad += part(LayerPart::AttnB), k.input_grad += part(LayerPart::MlpB);
    k.weight_grad += part(LayerPart::AttnW), k.weight_grad += part(LayerPart::MlpW);
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
      k.forward = part_seconds(plan, w.forward, shape).all();
      k.input_grad = part_seconds(plan, w.input_grad, shape).all();
      k.weight_grad = part_seconds(plan, w.weight_grad, shape).all();
    } else {
      // The LM head runs at the large-GEMM efficiency (ModelWorkload), each of its three passes.
      k.forward.gemm = lm_head_work(plan, seqs).flops(Precision::BF16) / plan.hardware.gemm_efficiency /
                       (plan.hardware.bf16_tflops * 1e12) / split;
      k.input_grad = k.weight_grad = k.forward;
    }
    b.kinds.push_back(k);
    b.step += k.total() * (double(head) * b.microbatches);
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
