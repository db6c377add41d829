#include "simulator/report/report_fields.hpp"

#include <algorithm>
#include <utility>

namespace stepsim {

const std::vector<ReportField>& simulate_report_fields() {
  using Kind = ReportField::Kind;
  static const std::vector<ReportField> fields = {
      {"achieved_tflops_per_gpu", Kind::Number},
      {"bubble_s", Kind::Number},
      {"bubble_share_of_compute", Kind::Number},
      {"compute_s", Kind::Number},
      {"cp_comm_s", Kind::Number},
      {"critical_rank", Kind::Number},
      {"dp_comm_s", Kind::Number},
      {"ep_comm_s", Kind::Number},
      {"explanation", Kind::Text},
      {"exposed_comm_s", Kind::Number},
      {"exposed_comm_share", Kind::Number},
      {"mfu", Kind::Number},
      {"pp_comm_s", Kind::Number},
      {"step_time_s", Kind::Number},
      {"tokens_per_s_per_gpu", Kind::Number},
      {"tokens_per_step", Kind::Number},
      {"tp_comm_s", Kind::Number},
      {"vs_roofline", Kind::Number},
      {"exposed_by_kind.cp_s", Kind::Number},
      {"exposed_by_kind.dp_s", Kind::Number},
      {"exposed_by_kind.ep_s", Kind::Number},
      {"exposed_by_kind.outside_fb_pairs_s", Kind::Number},
      {"exposed_by_kind.pp_s", Kind::Number},
      {"exposed_by_kind.tp_s", Kind::Number},
      {"memory.breakdown.activations_bytes", Kind::Number},
      {"memory.breakdown.buffers_bytes", Kind::Number},
      {"memory.breakdown.grads_bytes", Kind::Number},
      {"memory.breakdown.optimizer_bytes", Kind::Number},
      {"memory.breakdown.recompute_bytes", Kind::Number},
      {"memory.breakdown.weights_bytes", Kind::Number},
      {"memory.capacity_bytes", Kind::Number},
      {"memory.fits", Kind::Flag},
      {"memory.fp8_stash", Kind::Flag},
      {"memory.peak_bytes", Kind::Number},
      {"memory.peak_rank", Kind::Number},
      {"memory.peak_t_s", Kind::Number},
      {"memory.ranks_over_capacity", Kind::Number},
      {"memory.recompute", Kind::Text},
      {"roofline.achieved_tflops_per_gpu", Kind::Number},
      {"roofline.assumed.bf16_tflops", Kind::Number},
      {"roofline.assumed.comm_sms", Kind::Number},
      {"roofline.assumed.fp8_tflops", Kind::Number},
      {"roofline.assumed.ib_GBps", Kind::Number},
      {"roofline.assumed.nvlink_GBps", Kind::Number},
      {"roofline.assumed.peak_bf16_tflops", Kind::Number},
      {"roofline.assumed.peak_fp8_tflops", Kind::Number},
      {"roofline.assumed.sms", Kind::Number},
      {"roofline.bubble_s", Kind::Number},
      {"roofline.bubble_share", Kind::Number},
      {"roofline.bubble_share_of_compute", Kind::Number},
      {"roofline.comm_s", Kind::Number},
      {"roofline.compute_s", Kind::Number},
      {"roofline.cp.bytes_per_collective", Kind::Number},
      {"roofline.cp.bytes_per_gpu", Kind::Number},
      {"roofline.cp.collectives_per_gpu", Kind::Number},
      {"roofline.cp.link_GBps", Kind::Number},
      {"roofline.cp_comm_s", Kind::Number},
      {"roofline.dp.allgather_ib_bytes", Kind::Number},
      {"roofline.dp.allgather_s", Kind::Number},
      {"roofline.dp.expert_ib_nodes", Kind::Number},
      {"roofline.dp.expert_params_per_gpu", Kind::Number},
      {"roofline.dp.fsdp_shard_size", Kind::Number},
      {"roofline.dp.hsdp_allreduce_s", Kind::Number},
      {"roofline.dp.non_expert_ib_nodes", Kind::Number},
      {"roofline.dp.non_expert_params_per_gpu", Kind::Number},
      {"roofline.dp.reducescatter_ib_bytes", Kind::Number},
      {"roofline.dp.reducescatter_s", Kind::Number},
      {"roofline.dp.ring_GBps", Kind::Number},
      {"roofline.dp.zero", Kind::Number},
      {"roofline.dp_comm_s", Kind::Number},
      {"roofline.ep.combine_bytes_per_copy", Kind::Number},
      {"roofline.ep.dispatch_bytes_per_copy", Kind::Number},
      {"roofline.ep.ep_nodes", Kind::Number},
      {"roofline.ep.ib_bytes_per_gpu", Kind::Number},
      {"roofline.ep.in_node_bytes_per_gpu", Kind::Number},
      {"roofline.ep.in_node_s", Kind::Number},
      {"roofline.ep.mean_nodes", Kind::Number},
      {"roofline.ep.nvlink_bytes_per_gpu", Kind::Number},
      {"roofline.ep.nvlink_s", Kind::Number},
      {"roofline.ep.remote_nodes", Kind::Number},
      {"roofline.ep.routing", Kind::Text},
      {"roofline.ep.routing_samples", Kind::Number},
      {"roofline.ep.spine_bytes_per_gpu", Kind::Number},
      {"roofline.ep.spine_s", Kind::Number},
      {"roofline.ep.tokens_per_gpu", Kind::Number},
      {"roofline.ep_comm_s", Kind::Number},
      {"roofline.ep_share_of_compute", Kind::Number},
      {"roofline.exposed_comm_s", Kind::Number},
      {"roofline.exposed_comm_share", Kind::Number},
      {"roofline.flops.attention_flops", Kind::Number},
      {"roofline.flops.bf16_matmul_flops", Kind::Number},
      {"roofline.flops.matmul_flops", Kind::Number},
      {"roofline.flops.model_flops", Kind::Number},
      {"roofline.flops.recompute_bf16_flops", Kind::Number},
      {"roofline.flops.recompute_flops", Kind::Number},
      {"roofline.fsdp_per_microbatch_s", Kind::Number},
      {"roofline.mfu", Kind::Number},
      {"roofline.params.activated", Kind::Number},
      {"roofline.params.bf16_matmul", Kind::Number},
      {"roofline.params.non_expert", Kind::Number},
      {"roofline.params.recomputed", Kind::Number},
      {"roofline.params.routed_experts", Kind::Number},
      {"roofline.params.total", Kind::Number},
      {"roofline.overlap.exposed_s", Kind::Number},
      {"roofline.overlap.overlap_grad_reduce.bucket_params", Kind::Number},
      {"roofline.overlap.overlap_grad_reduce.buckets", Kind::Number},
      {"roofline.overlap.overlap_grad_reduce.enabled", Kind::Flag},
      {"roofline.overlap.overlap_grad_reduce.exposed_off_s", Kind::Number},
      {"roofline.overlap.overlap_grad_reduce.exposed_on_s", Kind::Number},
      {"roofline.overlap.overlap_param_gather.enabled", Kind::Flag},
      {"roofline.overlap.overlap_param_gather.exposed_off_s", Kind::Number},
      {"roofline.overlap.overlap_param_gather.exposed_on_s", Kind::Number},
      {"roofline.overlap.step_time_s", Kind::Number},
      {"roofline.overlap.tp_comm_overlap.enabled", Kind::Flag},
      {"roofline.overlap.tp_comm_overlap.exposed_off_s", Kind::Number},
      {"roofline.overlap.tp_comm_overlap.exposed_on_s", Kind::Number},
      {"roofline.overlap.tp_comm_overlap.sm_margin_s", Kind::Number},
      {"roofline.peak_tflops", Kind::Number},
      {"roofline.plan.cp", Kind::Number},
      {"roofline.plan.dp", Kind::Number},
      {"roofline.plan.edp", Kind::Number},
      {"roofline.plan.ep", Kind::Number},
      {"roofline.plan.global_batch", Kind::Number},
      {"roofline.plan.gpus", Kind::Number},
      {"roofline.plan.gpus_per_node", Kind::Number},
      {"roofline.plan.microbatches", Kind::Number},
      {"roofline.plan.model", Kind::Text},
      {"roofline.plan.nodes", Kind::Number},
      {"roofline.plan.overlap_grad_reduce", Kind::Flag},
      {"roofline.plan.overlap_param_gather", Kind::Flag},
      {"roofline.plan.pp", Kind::Number},
      {"roofline.plan.precision", Kind::Text},
      {"roofline.plan.recompute", Kind::Text},
      {"roofline.plan.schedule", Kind::Text},
      {"roofline.plan.seq_len", Kind::Number},
      {"roofline.plan.sequences_per_microbatch", Kind::Number},
      {"roofline.plan.stages", Kind::Number},
      {"roofline.plan.tokens_per_step", Kind::Number},
      {"roofline.plan.tp", Kind::Number},
      {"roofline.plan.tp_comm_overlap", Kind::Flag},
      {"roofline.plan.zero", Kind::Number},
      {"roofline.pp.link_GBps", Kind::Number},
      {"roofline.pp.sends_per_microbatch", Kind::Number},
      {"roofline.pp_comm_s", Kind::Number},
      {"roofline.remote_nodes", Kind::Number},
      {"roofline.reported_step_s", Kind::Number},
      {"roofline.speedup_vs_reported", Kind::Number},
      {"roofline.step_time_s", Kind::Number},
      {"roofline.terms.attention_s", Kind::Number},
      {"roofline.terms.bf16_correction_s", Kind::Number},
      {"roofline.terms.matmul_bf16_s", Kind::Number},
      {"roofline.terms.matmul_fp8_s", Kind::Number},
      {"roofline.terms.recompute_s", Kind::Number},
      {"roofline.terms.sm_tax_factor", Kind::Number},
      {"roofline.terms.sol_compute_s", Kind::Number},
      {"roofline.tokens_per_s_per_gpu", Kind::Number},
      {"roofline.tp.bytes_per_collective", Kind::Number},
      {"roofline.tp.bytes_per_gpu", Kind::Number},
      {"roofline.tp.collectives_per_gpu", Kind::Number},
      {"roofline.tp.kv_head_replicas", Kind::Number},
      {"roofline.tp.link_GBps", Kind::Number},
      {"roofline.tp.qkv_bytes_per_gpu", Kind::Number},
      {"roofline.tp.tokens_per_microbatch", Kind::Number},
      {"roofline.tp_comm_s", Kind::Number},
      {"routing.expert_max_over_mean.mean_over_layers", Kind::Number},
      {"routing.expert_max_over_mean.worst", Kind::Number},
      {"routing.expert_max_over_mean.worst_layer", Kind::Number},
      {"routing.gpu_max_over_mean.mean_over_layers", Kind::Number},
      {"routing.gpu_max_over_mean.worst", Kind::Number},
      {"routing.gpu_max_over_mean.worst_layer", Kind::Number},
      {"routing.mean_load_step_s", Kind::Number},
      {"routing.model", Kind::Text},
      {"routing.seed", Kind::Number},
      {"routing.slowdown", Kind::Number},
      {"sim.activities", Kind::Number},
      {"sim.fidelity", Kind::Text},
      {"sim.fidelity_description", Kind::Text},
      {"sim.mode", Kind::Text},
      {"sim.mode_description", Kind::Text},
      {"sim.ops", Kind::Number},
      {"sim.ranks_simulated", Kind::Number},
      {"sim.schedule", Kind::Text},
      {"sim.workload", Kind::Text},
      {"stats.bubble_s.max", Kind::Number},
      {"stats.bubble_s.mean", Kind::Number},
      {"stats.bubble_s.min", Kind::Number},
      {"stats.compute_s.max", Kind::Number},
      {"stats.compute_s.mean", Kind::Number},
      {"stats.compute_s.min", Kind::Number},
      {"stats.exposed_comm_s.max", Kind::Number},
      {"stats.exposed_comm_s.mean", Kind::Number},
      {"stats.exposed_comm_s.min", Kind::Number},
      {"stats.step_time_s.max", Kind::Number},
      {"stats.step_time_s.mean", Kind::Number},
      {"stats.step_time_s.min", Kind::Number},
      {"stragglers.baseline_step_s", Kind::Number},
      {"stragglers.jitter_sigma", Kind::Number},
      {"stragglers.rerouted_bytes", Kind::Number},
      {"stragglers.slowdown", Kind::Number},
      {"stragglers.step_impact_s", Kind::Number},
  };
  return fields;
}

const ReportField* find_report_field(const std::string& name) {
  for (const ReportField& f : simulate_report_fields())
    if (name == f.name) return &f;
  return nullptr;
}

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> closest_report_fields(const std::string& name, size_t max) {
  // Names are short (under 50 bytes); a long input is cut so the comparison stays cheap.
  const std::string probe = name.substr(0, 64);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const ReportField& f : simulate_report_fields()) scored.emplace_back(edit_distance(probe, f.name), f.name);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && out.size() < max; ++i) out.push_back(scored[i].second);
  return out;
}

}  // namespace stepsim
