#include "simulator/importers/plan_fields.hpp"

#include "vocabulary/plan_names.hpp"
#include "workloads/layers/layer_partition.hpp"

namespace stepsim::importers {

std::vector<PlanField> launch_fields(const Plan& p) {
  using nlohmann::json;
  const ModelConfig& m = p.model;
  const ParallelConfig& x = p.parallel;
  std::vector<PlanField> f = {
      {"model.hidden_size", m.hidden_size},
      {"model.num_hidden_layers", m.num_hidden_layers},
      {"model.first_k_dense_replace", m.is_moe() ? m.first_k_dense_replace : 0},
      {"model.intermediate_size", m.intermediate_size},
      {"model.moe_intermediate_size", m.is_moe() ? m.moe_intermediate_size : 0},
      {"model.n_routed_experts", m.n_routed_experts},
      {"model.n_shared_experts", m.is_moe() ? m.n_shared_experts : 0},
      {"model.shared_expert_intermediate_size", m.is_moe() ? m.shared_expert_intermediate_size : 0},
      {"model.num_experts_per_tok", m.is_moe() ? m.num_experts_per_tok : 0},
      {"model.n_group", m.is_moe() ? m.n_group : 1},
      {"model.topk_group", m.is_moe() ? m.topk_group : 1},
      {"model.num_attention_heads", m.num_attention_heads},
      {"model.num_key_value_heads", m.kv_heads()},
      {"model.head_dim", m.is_mla() ? 0 : m.head_dim > 0 ? m.head_dim : m.hidden_size / m.num_attention_heads},
      {"model.q_lora_rank", m.is_mla() ? m.q_lora_rank : 0},
      {"model.kv_lora_rank", m.kv_lora_rank},
      {"model.qk_nope_head_dim", m.is_mla() ? m.qk_nope_head_dim : 0},
      {"model.qk_rope_head_dim", m.is_mla() ? m.qk_rope_head_dim : 0},
      {"model.v_head_dim", m.is_mla() ? m.v_head_dim : 0},
      {"model.vocab_size", m.vocab_size},
      {"model.tie_word_embeddings", m.tie_word_embeddings},
      {"model.num_nextn_predict_layers", m.num_nextn_predict_layers},
      {"model.hidden_act", to_string(m.hidden_act)},
      {"model.rotary_pct", m.rotary_pct},
      {"model.attention_bias", m.attention_bias},
      {"model.mlp_bias", m.mlp_bias},
      {"model.swiglu_limit", m.swiglu_limit},
      {"model.qk_norm", m.qk_norm},
      {"model.sliding_window", m.sliding_window},
      {"model.sliding_layers", m.sliding_window > 0 ? json(m.sliding_layers) : json::array()},
      {"model.norm", to_string(m.norm)},
      {"train.global_batch", p.train.global_batch},
      {"train.seq_len", p.train.seq_len},
      {"train.precision", precision_name(p.train)},
      {"train.adam_moments_dtype", to_string(p.train.adam_moments_dtype)},
      {"cluster.nodes", p.cluster.nodes},
      {"cluster.gpus_per_node", p.cluster.gpus_per_node},
      {"schedule", to_string(x.schedule)},
      {"parallel.pp", x.pp},
      {"parallel.tp", x.tp},
      {"parallel.cp", x.cp},
      {"parallel.ep", x.ep},
      {"parallel.expert_tp", x.expert_tp},
      {"parallel.microbatches", x.microbatches},
      {"parallel.zero", x.zero},
      {"parallel.fsdp_shard_size", x.zero == 3 && x.fsdp_shard_size != p.dp() * x.cp ? x.fsdp_shard_size : 0},
      {"parallel.virtual_stages", x.virtual_stages > 0 ? x.virtual_stages : to_string(x.schedule) == std::string("interleaved") ? 2 : 1},
      {"parallel.recompute", to_string(x.recompute)},
      {"parallel.fp8_stash", x.fp8_stash},
      {"parallel.grad_reduce_dtype", to_string(x.grad_reduce_dtype)},
      {"parallel.split_lone_chunks", x.split_lone_chunks},
      {"parallel.split_backward", x.split_backward},
      {"parallel.tp_comm_overlap", x.tp_comm_overlap},
      {"parallel.overlap_grad_reduce", x.overlap_grad_reduce},
      {"parallel.overlap_param_gather", x.overlap_param_gather},
      {"parallel.ddp_bucket_size", x.overlap_grad_reduce ? x.ddp_bucket_size : 0},
      {"parallel.cpu_offload_layers", x.cpu_offload_layers},
  };
  // How FP8 finds its scales matters only where GEMMs run in per-tensor or 1x128 FP8.
  if (p.train.fp8_recipe_applies())
    f.push_back({"train.fp8_recipe", to_string(p.train.fp8_recipe)});
  if (p.train.fp8_attention_applies()) f.push_back({"train.fp8_attention", p.train.fp8_attention});
  // How CP exchanges the attention's tensors matters only where there is CP.
  if (x.cp > 1) f.push_back({"parallel.cp_comm_type", to_string(x.cp_comm_type)});
  // Which format the parameter all-gather moves matters only where GEMMs run in a low-precision format.
  if (p.train.precision == Precision::FP8) f.push_back({"parallel.fp8_param_gather", x.fp8_param_gather});
  // How the experts run matters only where there are experts.
  if (m.is_moe()) {
    const std::vector<PlanField> moe = {
        {"parallel.overlap_shared_expert", x.overlap_shared_expert},
        {"parallel.moe_dispatcher", to_string(x.moe_dispatcher)},
        {"parallel.moe_fp8_dispatch", x.moe_fp8_dispatch},
        {"parallel.moe_flex_backend", to_string(x.moe_flex_backend)},
        {"parallel.moe_grouped_gemm", x.moe_grouped_gemm},
        {"parallel.moe_router_dtype", to_string(x.moe_router_dtype)},
        {"parallel.moe_capacity_factor", x.moe_capacity_factor},
        {"parallel.moe_pad_to_capacity", x.moe_pad_to_capacity},
        {"parallel.moe_overlap_ep_comm", x.moe_overlap_ep_comm},
        {"parallel.moe_paged_stash", x.moe_paged_stash},
    };
    f.insert(f.end(), moe.begin(), moe.end());
  }
  // The layers of each stage as the replay places them (parallel.stage_layers, else balanced).
  if (p.workload.kind == WorkloadKind::Model) {
    json counts = json::array();
    for (const auto& s : partition_layers(p)) counts.push_back(s.count);
    f.push_back({"parallel.stage_layers", counts});
  }
  const SoftwareConfig& s = p.software;
  const std::vector<PlanField> rest = {
      {"software.profile", s.profile},
      {"software.kernel_launch_s", s.kernel_launch_s},
      {"software.host_launch_s", s.host_launch_s},
      {"software.looped_launch_s", s.looped_host_launch_s()},
      {"software.moe_layer_host_s", s.moe_layer_host_s},
      {"software.alltoall_dispatch_launches", s.alltoall_dispatch_launches},
      {"software.gemm_efficiency", s.gemm_efficiency},
      {"software.fp8_efficiency", s.fp8_efficiency},
      {"software.mxfp8_efficiency", s.mxfp8_efficiency},
      {"software.nvfp4_efficiency", s.nvfp4_efficiency},
      {"software.cuda_graphs", to_string(s.cuda_graphs)},
      {"software.cuda_graph_scope", graph_scope_text(s.cuda_graph_scope)},
      {"software.attention_kernel", to_string(s.attention_kernel)},
      {"software.pipeline_split", to_string(s.pipeline_split)},
      {"software.megatron_flops", to_string(s.megatron_flops)},
      {"software.deepep_sms", s.deepep_sms},
      {"software.host_syncs_per_moe_layer", s.host_syncs_per_moe_layer},
      {"software.moe_wgrad_before_dispatch", s.moe_wgrad_before_dispatch},
      {"software.fused.cross_entropy", s.fused_cross_entropy},
      {"software.fused.norm_cast", s.fused_norm_cast},
      {"software.fused.norm_block_cast", s.norm_block_cast()},
      {"software.fused.activation_cast", s.fused_activation_cast},
      {"software.fused.elementwise", s.fused_elementwise},
      {"software.fused.clamped_glu", s.fused_clamped_glu},
      {"software.fused.expert_bias", s.fused_expert_bias},
      {"software.fused.mla_down_proj", s.fused_mla_down_proj},
      {"software.fused.mla_qkv", s.fused_mla_qkv},
      {"software.fused.grouped_mlp", s.fused_grouped_mlp},
      {"scenario.routing", to_string(p.scenario.routing)},
      {"scenario.stragglers", p.scenario.stragglers.size()},
      {"scenario.jitter_sigma", p.scenario.jitter_sigma},
      {"workload.kind", name_of(kWorkloadKinds, p.workload.kind)},
  };
  f.insert(f.end(), rest.begin(), rest.end());
  return f;
}

std::vector<FieldDifference> plan_differences(const Plan& ours, const Plan& theirs) {
  const auto a = launch_fields(ours), b = launch_fields(theirs);
  std::vector<FieldDifference> out;
  for (const auto& fa : a) {
    nlohmann::json other;  // null: the other plan has no such key (e.g. no experts)
    for (const auto& fb : b)
      if (fb.key == fa.key) other = fb.value;
    if (other != fa.value) out.push_back({fa.key, fa.value, other});
  }
  for (const auto& fb : b) {
    bool in_a = false;
    for (const auto& fa : a) in_a = in_a || fa.key == fb.key;
    if (!in_a) out.push_back({fb.key, nullptr, fb.value});
  }
  return out;
}

std::vector<std::string> machine_overrides(const Plan& plan) {
  const ClusterConfig& c = plan.cluster;
  const ClusterConfig d;
  std::vector<std::string> out;
  if (c.topology != d.topology) out.push_back("cluster.topology=" + std::string(to_string(c.topology)));
  if (c.topology != Topology::Star && c.oversubscription != d.oversubscription)
    out.push_back("cluster.oversubscription=" + nlohmann::json(c.oversubscription).dump());
  if (c.rail_optimized) out.push_back("cluster.rail_optimized=true");
  if (c.topology != Topology::Star && c.leaf_nics != d.leaf_nics) out.push_back("cluster.leaf_nics=" + std::to_string(c.leaf_nics));
  if (c.nvlink_domain != d.nvlink_domain) out.push_back("cluster.nvlink_domain=" + std::to_string(c.nvlink_domain));
  return out;
}

}  // namespace stepsim::importers
