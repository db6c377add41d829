#include "simulator/report/roofline_report.hpp"
#include "schedules/registry.hpp"
#include "simulator/report/percent.hpp"
#include "simulator/report/stage_layers_report.hpp"
#include "workloads/cost/attention_cost.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "simulator/report/expert_layout_report.hpp"
#include "vocabulary/rank_layout.hpp"

#include <fmt/format.h>

namespace stepsim {

void add_plan_inputs(nlohmann::json& j, const Plan& plan) {
  j["config"] = plan.source;
  j["sets"] = plan.overrides;
  j["notes"] = plan.notes;
  const SoftwareConfig& sw = plan.software;
  j["software"] = {{"profile", sw.profile},
                   {"name", sw.name},
                   {"kernel_launch_s", sw.kernel_launch_s},
                   {"host_launch_s", sw.host_launch_s},
                   {"looped_launch_s", sw.looped_host_launch_s()},
                   {"moe_layer_host_s", sw.moe_layer_host_s},
                   {"alltoall_dispatch_launches", sw.alltoall_dispatch_launches},
                   {"gemm_efficiency", sw.gemm_efficiency},
                   {"fp8_efficiency", sw.fp8_efficiency},
                   {"mxfp8_efficiency", sw.low_precision_efficiency(LowPrecision::Mxfp8)},
                   {"nvfp4_efficiency", sw.nvfp4_efficiency},
                   {"cuda_graphs", to_string(sw.cuda_graphs)},
                   {"cuda_graph_scope", graph_scope_text(sw.cuda_graph_scope)},
                   {"attention_kernel", to_string(sw.attention_kernel)},
                   {"pipeline_split", to_string(sw.pipeline_split)},
                   {"megatron_flops", to_string(sw.megatron_flops)},
                   {"deepep_sms", sw.deepep_sms},
                   {"host_syncs_per_moe_layer", sw.host_syncs_per_moe_layer},
                   {"cudnn_version", sw.cudnn_version},
                   {"moe_wgrad_before_dispatch", sw.moe_wgrad_before_dispatch},
                   {"grouped_gemm_per_expert", sw.grouped_gemm_per_expert},
                   {"fp8_weight_cache", sw.fp8_weight_cache},
                   {"fused", {{"cross_entropy", sw.fused_cross_entropy},
                              {"norm_cast", sw.fused_norm_cast},
                              {"norm_block_cast", sw.norm_block_cast()},
                              {"activation_cast", sw.fused_activation_cast},
                              {"elementwise", sw.fused_elementwise},
                              {"clamped_glu", sw.fused_clamped_glu},
                              {"expert_bias", sw.fused_expert_bias},
                              {"mla_down_proj", sw.fused_mla_down_proj},
                              {"mla_qkv", sw.fused_mla_qkv},
                              {"grouped_mlp", sw.fused_grouped_mlp}}}};
}

namespace {
// How the MoE block's framework host time is priced (software.moe_layer_host_s per Python-level call).
std::string moe_host_text(const Plan& plan) {
  const SoftwareConfig& sw = plan.software;
  if (!plan.model.is_moe() || sw.moe_layer_host_s <= 0) return {};
  const MoePythonCalls calls = moe_python_calls(plan);
  return fmt::format(", the MoE block's framework host work {:g} us per Python-level call (moe_layer_host_s / {:g}), "
                     "{:g} calls a layer forward and {:g} backward",
                     sw.moe_layer_host_s / MoePythonCalls::kFlexTotal * 1e6, MoePythonCalls::kFlexTotal, calls.forward,
                     calls.backward);
}

// cuDNN's integer as its release: 91002 -> 9.10.2 (cuDNN 9 on: x 10000), 8907 -> 8.9.7 (cuDNN 8: x 1000).
std::string cudnn_text(int64_t v) {
  if (v >= 90000) return fmt::format("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, v / 100 % 10, v % 100);
}
}  // namespace

std::string software_text(const Plan& plan) {
  const SoftwareConfig& sw = plan.software;
  std::string fused;
  for (const auto& [on, what] : {std::pair{sw.fused_cross_entropy, "cross-entropy"}, std::pair{sw.fused_norm_cast, sw.norm_block_cast() ? "norm + cast" : "norm + cast (not MXFP8 / NVFP4)"},
                                 std::pair{sw.fused_activation_cast, "activation + cast"},
                                 std::pair{sw.fused_grouped_mlp, "grouped MLP (the experts' activation in their GEMMs' epilogues)"}})
    if (on) fused += (fused.empty() ? "" : ", ") + std::string(what);
  const double low = plan.train.precision == Precision::BF16 ? 1.0 : sw.low_precision_efficiency(plan.train.low_precision);
  return fmt::format("{} (software.profile {}): GEMMs at {:g} of the preset's rate{}, {:g} us per kernel on the GPU, {:g} "
                     "us per kernel on the host, CUDA graphs {}, fused {}",
                     sw.name, sw.profile, sw.gemm_efficiency,
                     low != 1 ? fmt::format(" ({} GEMMs: x {:g})", precision_name(plan.train), low) : std::string(),
                     sw.kernel_launch_s * 1e6, sw.host_launch_s * 1e6,
                     std::string(to_string(sw.cuda_graphs)) +
                         (sw.cuda_graph_scope != 0 && sw.cuda_graphs == CudaGraphs::Layers
                              ? " (" + graph_scope_text(sw.cuda_graph_scope) + " only; the rest eager)"
                              : std::string()),
                     fused.empty() ? "none" : fused) +
         (sw.cudnn_version > 0 ? fmt::format(", cuDNN {} (software.cudnn_version)", cudnn_text(sw.cudnn_version))
                               : std::string()) +
         (sw.fused_elementwise ? std::string()
                               : ", norms, RoPE and the gated activation as eager composite ops (software.fused.elementwise false)") +
         moe_host_text(plan) +
         (plan.model.is_mla() && !sw.fused_mla_down_proj
              ? ", MLA's input norm apart from its two down projections, each casting its output (software.fused.mla_down_proj false)"
              : std::string()) +
         (plan.model.is_mla() && !sw.fused_mla_qkv
              ? ", MLA's query, key and value as Megatron-Core's modules build them (software.fused.mla_qkv false)"
              : std::string()) +
         (sw.attention_kernel == AttentionKernel::Flash2 ? ", attention in FlashAttention-2 (software.attention_kernel flash2)"
                                                         : std::string()) +
         (plan.train.fp8_recipe_applies()
              ? fmt::format(", FP8 {} scaling (train.fp8_recipe)", to_string(plan.train.fp8_recipe))
              : std::string());
}

std::string attention_rates_text(const Plan& plan) {
  const HardwareConfig& hw = plan.hardware;
  const std::string bf16 =
      fmt::format("{:g} / {:g} TFLOP/s forward / backward", hw.attention_fwd_tflops, hw.attention_bwd_tflops) +
      (hw.attention_cudnn_version > 0 ? fmt::format(" (cuDNN {}'s curve)", cudnn_text(hw.attention_cudnn_version)) : std::string());
  // The kernel and format the cost model runs (cost::attention_format: one home for that choice).
  switch (cost::attention_format(plan)) {
    case cost::AttentionFormat::Bf16EarlyCudnn:
      return fmt::format("in cuDNN {} at {:g} / {:g} TFLOP/s forward / backward, half rate at {:g} / {:g} keys "
                         "(software.cudnn_version {} ships a release older than the preset's cuDNN {} curve, {:g} / {:g}){}",
                         cudnn_text(hw.attention_early_cudnn_version), hw.attention_early.fwd_tflops,
                         hw.attention_early.bwd_tflops, hw.attention_early.fwd_seq_half, hw.attention_early.bwd_seq_half,
                         plan.software.cudnn_version, cudnn_text(hw.attention_cudnn_version), hw.attention_fwd_tflops,
                         hw.attention_bwd_tflops,
                         plan.model.sliding_window > 0 ? ", sliding-window layers at its rate for S = W" : "");
    case cost::AttentionFormat::Bf16:
      if (plan.model.sliding_window <= 0) return "at " + bf16;
      // A sliding-window model's BF16 layers run at R x W / (W + K), K each pass's window constant.
      return fmt::format("at {}, sliding-window layers at R x W / (W + K) with K {:g} / {:g} keys", bf16,
                         cost::attention_window_half(hw, false), cost::attention_window_half(hw, true));
    case cost::AttentionFormat::Flash2Bf16:
      return fmt::format("in FlashAttention-2 at {:g} / {:g} TFLOP/s forward / backward (software.attention_kernel flash2; "
                         "the fused kernel's {}){}",
                         hw.attention_flash2.fwd_tflops, hw.attention_flash2.bwd_tflops, bf16,
                         plan.model.sliding_window > 0 ? ", sliding-window layers at its rate for S = W" : "");
    case cost::AttentionFormat::Fp8:
    case cost::AttentionFormat::Mxfp8: break;
  }
  const bool mx = plan.train.low_precision == LowPrecision::Mxfp8;
  const HardwareConfig::AttentionCurve& c = hw.attention_curve(plan.train.low_precision);
  return fmt::format("in {} at {:g} / {:g} TFLOP/s forward / backward (train.fp8_attention; BF16 {}){}", mx ? "MXFP8" : "FP8",
                     c.fwd_tflops, c.bwd_tflops, bf16,
                     hw.attention_fp8_bwd_skips_window || plan.model.sliding_window <= 0
                         ? std::string()
                         : std::string(", its backward computing every causal tile of a sliding-window layer"));
}

nlohmann::json roofline_json(const Plan& plan, const Roofline& r) {
  const RankLayout layout(plan);
  nlohmann::json j;
  j["compute_s"] = r.compute_s;
  j["ep_comm_s"] = r.ep_comm_s;
  j["pp_comm_s"] = r.pp_comm_s;
  j["dp_comm_s"] = r.dp_comm_s;
  j["tp_comm_s"] = r.tp_comm_s;
  j["cp_comm_s"] = r.cp_comm_s;
  j["comm_s"] = r.comm_s;
  j["bubble_s"] = r.bubble_s;
  j["bubble_share"] = r.bubble_share;
  j["exposed_comm_s"] = r.exposed_comm_s;
  j["step_time_s"] = r.step_time_s;
  // The simulation's share names, so a sweep can plot each simulated share beside its roofline.
  j["exposed_comm_share"] = r.step_time_s > 0 ? r.exposed_comm_s / r.step_time_s : 0.0;
  j["bubble_share_of_compute"] = r.bubble_share;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["remote_nodes"] = r.routing.remote_nodes;
  j["ep_share_of_compute"] = r.ep_share_of_compute;
  // Only for DeepSeek-V3 (its published cost) or a step the user measured (train.reported_step_s, or
  // derived from a logged train.reported_tflops_per_gpu).
  j["reported_step_s"] = r.reported_step_s > 0 ? nlohmann::json(r.reported_step_s) : nlohmann::json();
  j["speedup_vs_reported"] = r.reported_step_s > 0 ? nlohmann::json(r.speedup_vs_reported) : nlohmann::json();
  // Where it comes from: a step the run printed, or its logged TFLOP/s in the release's count.
  j["reported_step_from_tflops_per_gpu"] = plan.train.reported_step_s <= 0 && plan.train.reported_tflops_per_gpu > 0
                                               ? nlohmann::json(plan.train.reported_tflops_per_gpu)
                                               : nlohmann::json();
  j["mfu"] = r.mfu;
  j["achieved_tflops_per_gpu"] = r.achieved_tflops_per_gpu;
  j["peak_tflops"] = r.peak_tflops;
  if (plan.parallel.zero == 3) j["fsdp_per_microbatch_s"] = r.dp.fsdp_per_microbatch_s;

  auto& t = j["terms"];
  t["matmul_fp8_s"] = r.terms.matmul_fp8_s;
  t["matmul_bf16_s"] = r.terms.matmul_bf16_s;
  t["bf16_correction_s"] = r.terms.bf16_correction_s;
  t["attention_s"] = r.terms.attention_s;
  t["recompute_s"] = r.terms.recompute_s;
  t["sol_compute_s"] = r.terms.sol_s;
  t["sm_tax_factor"] = r.terms.sm_tax_factor;

  auto& f = j["flops"];
  f["matmul_flops"] = r.terms.matmul_flops;
  f["bf16_matmul_flops"] = r.terms.bf16_matmul_flops;
  f["attention_flops"] = r.terms.attention_flops;
  f["recompute_flops"] = r.terms.recompute_flops;
  f["recompute_bf16_flops"] = r.terms.recompute_bf16_flops;
  f["model_flops"] = r.terms.model_flops;
  f["megatron_flops"] = r.terms.megatron_flops > 0 ? nlohmann::json(r.terms.megatron_flops) : nlohmann::json();

  auto& p = j["params"];
  p["activated"] = r.activated_params;
  p["total"] = r.total_params;
  p["non_expert"] = r.params.non_expert_total();
  p["routed_experts"] = r.params.routed_experts_total();
  p["bf16_matmul"] = r.params.bf16_matmul();
  p["recomputed"] = r.params.recomputed();

  auto& e = j["ep"];
  e["remote_nodes"] = r.routing.remote_nodes;
  e["dispatcher"] = to_string(plan.parallel.moe_dispatcher);
  e["ib_copies_per_token"] = r.ep.ib_copies_per_token;
  e["etp_bytes_per_gpu"] = r.ep.etp_bytes_per_gpu;
  e["etp_s"] = r.ep.etp_s;
  e["mean_nodes"] = r.routing.mean_nodes;
  e["ep_nodes"] = r.routing.ep_nodes;
  e["node_share"] = r.routing.node_share;
  e["routing"] = to_string(plan.scenario.routing);
  e["routing_samples"] = r.routing.samples;
  e["tokens_per_gpu"] = r.ep.tokens_per_gpu;
  e["dispatch_bytes_per_copy"] = r.ep.dispatch_bytes_per_copy;
  e["combine_bytes_per_copy"] = r.ep.combine_bytes_per_copy;
  e["ib_bytes_per_gpu"] = r.ep.ib_bytes_per_gpu;
  e["nvlink_bytes_per_gpu"] = r.ep.nvlink_bytes_per_gpu;
  e["nvlink_s"] = r.ep.nvlink_s;
  e["in_node_bytes_per_gpu"] = r.ep.in_node_bytes_per_gpu;
  e["in_node_s"] = r.ep.in_node_s;
  e["spine_bytes_per_gpu"] = r.ep.spine_bytes_per_gpu;
  e["spine_s"] = r.ep.spine_s;

  auto& d = j["dp"];
  d["zero"] = plan.parallel.zero;
  d["non_expert_params_per_gpu"] = r.dp.non_expert_params_per_gpu;
  d["expert_params_per_gpu"] = r.dp.expert_params_per_gpu;
  d["non_expert_ib_nodes"] = r.dp.non_expert_ib_nodes;
  d["expert_ib_nodes"] = r.dp.expert_ib_nodes;
  d["allgather_ib_bytes"] = r.dp.allgather_ib_bytes;
  d["reducescatter_ib_bytes"] = r.dp.reducescatter_ib_bytes;
  d["allgather_s"] = r.dp.allgather_s;
  d["ring_GBps"] = r.dp.ring_GBps;
  d["reducescatter_s"] = r.dp.reducescatter_s;
  d["fsdp_shard_size"] = plan.parallel.fsdp_shard_size;
  d["hsdp_allreduce_s"] = r.dp.hsdp_allreduce_s;

  j["pp"] = {{"sends_per_microbatch", r.pp_sends_per_microbatch}, {"link_GBps", r.pp_link_GBps}};
  j["tp"] = {{"tokens_per_microbatch", r.tpcp.tokens_per_microbatch},
             {"collectives_per_gpu", r.tpcp.tp_collectives},
             {"bytes_per_collective", r.tpcp.tp_bytes_per_collective},
             {"bytes_per_gpu", r.tpcp.tp_bytes_per_gpu},
             {"qkv_bytes_per_gpu", r.tpcp.tp_qkv_bytes_per_gpu},
             {"kv_head_replicas", kv_head_replicas(plan)},
             {"link_GBps", r.tpcp.tp_link_GBps}};
  j["cp"] = {{"comm_type", to_string(plan.parallel.cp_comm_type)},
             {"collectives_per_gpu", r.tpcp.cp_collectives},
             {"bytes_per_collective", r.tpcp.cp_bytes_per_collective},
             {"bytes_per_gpu", r.tpcp.cp_bytes_per_gpu},
             {"link_GBps", r.tpcp.cp_link_GBps}};
  const OverlapTerms& o = r.overlap;
  j["overlap"] = {
      {"tp_comm_overlap", {{"enabled", plan.parallel.tp_comm_overlap},
                           {"exposed_off_s", o.tp_exposed_off_s},
                           {"exposed_on_s", o.tp_exposed_on_s},
                           {"sm_margin_s", o.tp_sm_margin_s}}},
      {"overlap_grad_reduce", {{"enabled", plan.parallel.overlap_grad_reduce},
                               {"bucket_params", o.bucket_params},
                               {"buckets", o.buckets},
                               {"exposed_off_s", o.dp_reduce_exposed_off_s},
                               {"exposed_on_s", o.dp_reduce_exposed_on_s}}},
      {"overlap_param_gather", {{"enabled", plan.parallel.overlap_param_gather},
                                {"exposed_off_s", o.dp_gather_exposed_off_s},
                                {"exposed_on_s", o.dp_gather_exposed_on_s}}},
      {"exposed_s", o.exposed_s},
      {"step_time_s", o.step_time_s}};
  j["fsdp_sweep"] = nlohmann::json::array();
  for (const auto& pt : r.fsdp_sweep)
    j["fsdp_sweep"].push_back({{"microbatches", pt.microbatches}, {"exposed_share", pt.exposed_share}});

  j["assumed"] = {{"fp8_tflops", plan.hardware.fp8_tflops}, {"bf16_tflops", plan.hardware.bf16_tflops},
                  {"ib_GBps", plan.hardware.ib_GBps},       {"nvlink_GBps", plan.hardware.nvlink_GBps},
                  {"comm_sms", plan.hardware.comm_sms},     {"sms", plan.hardware.sms},
                  {"peak_bf16_tflops", plan.hardware.peak_bf16_tflops},
                  {"peak_fp8_tflops", plan.hardware.peak_fp8_tflops}};
  j["plan"] = {{"model", plan.model.name},
               {"gpus", plan.gpus()},
               {"nodes", plan.cluster.nodes},
               {"gpus_per_node", plan.cluster.gpus_per_node},
               {"pp", layout.pp()},
               {"tp", layout.tp()},
               {"cp", layout.cp()},
               {"stages", sched::path_stages(plan)},
               {"dp", plan.dp()},
               {"ep", layout.ep()},
               {"edp", plan.edp()},
               {"microbatches", plan.parallel.microbatches},
               {"sequences_per_microbatch", plan.sequences_per_microbatch()},
               {"zero", plan.parallel.zero},
               {"tp_comm_overlap", plan.parallel.tp_comm_overlap},
               {"overlap_grad_reduce", plan.parallel.overlap_grad_reduce},
               {"overlap_param_gather", plan.parallel.overlap_param_gather},
               {"fp8_param_gather", plan.parallel.fp8_param_gather},
               {"schedule", to_string(plan.parallel.schedule)},
               {"precision", precision_name(plan.train)},
               {"grad_reduce_dtype", to_string(plan.parallel.grad_reduce_dtype)},
               {"recompute", to_string(plan.parallel.recompute)},
               {"global_batch", plan.train.global_batch},
               {"seq_len", plan.train.seq_len},
               {"tokens_per_step", r.tokens_per_step}};
  if (plan.train.fp8_recipe_applies())
    j["plan"]["fp8_recipe"] = to_string(plan.train.fp8_recipe);
  if (plan.model.is_moe()) j["experts"] = expert_layout_json(plan);
  if (plan.workload.kind == WorkloadKind::Model) {
    const StageLayersView v = stage_layers_view(plan);
    j["plan"]["stage_layers"] = v.per_stage;
    j["plan"]["rank_layers"] = v.per_rank;
  }
  return j;
}

namespace {

std::string row(const std::string& name, double seconds, const std::string& note = "") {
  return fmt::format("  {:<38}{:>10.3f} s   {}\n", name, seconds, note);
}

// The formats the ZeRO collectives move: parameters gathered in BF16, or the FP8 GEMMs' weights in
// their own (parallel.fp8_param_gather); gradients reduced in parallel.grad_reduce_dtype.
std::string gather_format(const Plan& plan) {
  const double bytes = plan.gathered_weight_bytes();
  return bytes == 2 ? "BF16" : fmt::format("GEMM weights at {:.4g} B a value, the rest BF16", bytes);
}
std::string reduce_format(const Plan& plan) {
  return plan.parallel.grad_reduce_dtype == ReduceDtype::BF16 ? "BF16" : "FP32";
}


}  // namespace

std::string tp_cp_text(const Plan& plan) {
  const RankLayout layout(plan);
  if (layout.tp() <= 1 && layout.cp() <= 1) return "";
  const int64_t replicas = kv_head_replicas(plan);
  return fmt::format("TP {}{}, CP {}, ", layout.tp(),
                     replicas > 1 ? fmt::format(" (each KV head on {} ranks: {} KV heads, so the QKV output is "
                                                "all-gathered over TP)",
                                                replicas, layout.tp() / replicas)
                                  : std::string(),
                     layout.cp() > 1 ? fmt::format("{} ({})", layout.cp(), to_string(plan.parallel.cp_comm_type))
                                     : std::string("1"));
}

std::string roofline_text(const Plan& plan, const Roofline& r) {
  const RankLayout layout(plan);
  std::string out;
  out += fmt::format("stepsim roofline: {} on {} x {} {} ({} GPUs), config {}\n", plan.model.name,
                     plan.cluster.nodes, plan.cluster.gpus_per_node, plan.hardware.name, plan.gpus(), plan.source);
  out += fmt::format("plan: {} PP {} ({} stages), {}EP {}, DP {} (expert DP {}), ZeRO-{}, {} microbatches; "
                     "{} x {} tokens = {:.4g} tokens/step\n",
                     to_string(plan.parallel.schedule), layout.pp(), sched::path_stages(plan),
                     tp_cp_text(plan),
                     layout.ep(),
                     plan.dp(), plan.edp(), plan.parallel.zero, plan.parallel.microbatches, plan.train.global_batch,
                     plan.train.seq_len, r.tokens_per_step);
  out += expert_layout_text(plan);
  out += fmt::format("assumed: FP8 {} TFLOP/s, BF16 {} TFLOP/s achievable per GPU; IB {} GB/s per GPU per "
                     "direction; NVLink {} GB/s; {} of {} SMs for communication\n",
                     plan.hardware.fp8_tflops, plan.hardware.bf16_tflops, plan.hardware.ib_GBps,
                     plan.hardware.nvlink_GBps, plan.taxed_comm_sms(), plan.hardware.sms);
  out += fmt::format("params: {:.4g} total, N = {:.6g} activated (matmul) per token; {} GEMMs, recompute {}\n\n",
                     double(r.total_params), double(r.activated_params), precision_text(plan.train),
                     to_string(plan.parallel.recompute));

  out += "compute per GPU (speed of light)\n";
  if (plan.train.precision == Precision::FP8) {
    out += row("6ND matmuls at FP8", r.terms.matmul_fp8_s, fmt::format("{:.4g} FLOP", r.terms.matmul_flops - r.terms.bf16_matmul_flops));
    out += row("BF16 matmuls (routers, LM head)", r.terms.matmul_bf16_s,
               fmt::format("{:.4g} FLOP; +{:.0f} ms vs FP8", r.terms.bf16_matmul_flops, 1e3 * r.terms.bf16_correction_s));
  } else {
    out += row("6ND matmuls at BF16", r.terms.matmul_bf16_s, fmt::format("{:.4g} FLOP", r.terms.matmul_flops));
  }
  out += row("attention core (BF16)", r.terms.attention_s, fmt::format("{:.4g} FLOP", r.terms.attention_flops));
  out += row(fmt::format("recompute ({})", to_string(plan.parallel.recompute)), r.terms.recompute_s,
             fmt::format("{:.4g} FLOP", r.terms.recompute_flops));
  if (r.terms.sm_tax_factor != 1.0)
    out += row("SM tax of comm kernels", r.compute_s - r.terms.sol_s, fmt::format("x {:.4f}", r.terms.sm_tax_factor));
  out += row("compute", r.compute_s);

  out += "\ncommunication per GPU (overlappable)\n";
  if (r.ep.in_node_s > 0)
    out += row("EP dispatch + combine (NVLink)", r.ep_comm_s,
               fmt::format("EP {} inside a node; {} of compute", layout.ep(), pct(r.ep_share_of_compute)));
  else if (plan.parallel.moe_dispatcher == MoeDispatcher::DeepEP)
    out += row("EP dispatch + combine (IB)", r.ep_comm_s,
               fmt::format("{:.3f} remote nodes ({} routing); {} of compute", r.routing.remote_nodes,
                           to_string(plan.scenario.routing), pct(r.ep_share_of_compute)));
  else
    out += row("EP dispatch + combine (IB)", r.ep_comm_s,
               fmt::format("{:.3f} IB copies per token ({} dispatcher); {} of compute", r.ep.ib_copies_per_token,
                           to_string(plan.parallel.moe_dispatcher), pct(r.ep_share_of_compute)));
  out += row("PP residual-stream sends", r.pp_comm_s,
             fmt::format("{} sends per microbatch at {} GB/s", r.pp_sends_per_microbatch, r.pp_link_GBps));
  if (plan.parallel.zero == 3)
    out += row("FSDP all-gathers + reduce-scatter", r.dp_comm_s,
               fmt::format("{:.3f} s per microbatch x {}", r.dp.fsdp_per_microbatch_s, plan.parallel.microbatches));
  else if (plan.parallel.zero == 2)
    out += row("ZeRO-2 all-gather + reduce-scatters", r.dp_comm_s,
               fmt::format("AG {:.3f} s ({}) + RS {:.3f} s ({}) x {} microbatches", r.dp.allgather_s, gather_format(plan),
                           r.dp.reducescatter_s, reduce_format(plan),
                           plan.parallel.microbatches));
  else
    out += row("ZeRO-1 all-gather + reduce-scatter", r.dp_comm_s,
               fmt::format("AG {:.3f} s ({}) + RS {:.3f} s ({})", r.dp.allgather_s, gather_format(plan),
                           r.dp.reducescatter_s, reduce_format(plan)));
  if (layout.tp() > 1)
    out += row("TP all-gathers + reduce-scatters", r.tp_comm_s,
               fmt::format("{:.0f} of {:.4g} B per GPU at {} GB/s", r.tpcp.tp_collectives,
                           r.tpcp.tp_bytes_per_collective, r.tpcp.tp_link_GBps));
  if (layout.cp() > 1)
    out += row(fmt::format("CP exchanges ({})", to_string(plan.parallel.cp_comm_type)), r.cp_comm_s,
               fmt::format("{:.0f} of {:.4g} B per GPU at {} GB/s", r.tpcp.cp_collectives,
                           r.tpcp.cp_bytes_per_collective, r.tpcp.cp_link_GBps));
  out += row("communication", r.comm_s, fmt::format("{} of compute", pct(r.comm_s / r.compute_s)));
  out += row("EP over NVLink (upper bound)", r.ep.nvlink_s, "not on the critical link");

  out += "\nstep\n";
  out += row("pipeline bubble", r.bubble_s, fmt::format("{} of compute", pct(r.bubble_share)));
  out += row("exposed communication", r.exposed_comm_s, r.exposed_comm_s > 0 ? "comms bound" : "compute bound");
  out += row("step time (perfect overlap)", r.step_time_s, fmt::format("{:.0f} tokens/s/GPU", r.tokens_per_s_per_gpu));
  const OverlapTerms& o = r.overlap;
  const auto on_off = [](bool on) { return on ? "on" : "off"; };
  if (layout.tp() > 1)
    out += row(fmt::format("+ TP exposed (tp_comm_overlap {})", on_off(plan.parallel.tp_comm_overlap)),
               plan.parallel.tp_comm_overlap ? o.tp_exposed_on_s + o.tp_sm_margin_s : o.tp_exposed_off_s,
               fmt::format("off {:.3f} s, on {:.3f} s + {:.3f} s SM margin", o.tp_exposed_off_s, o.tp_exposed_on_s,
                           o.tp_sm_margin_s));
  if (plan.parallel.zero != 3 && o.dp_reduce_exposed_off_s > 0) {
    out += row(fmt::format("+ DP RS exposed (grad_reduce {})", on_off(plan.parallel.overlap_grad_reduce)),
               plan.parallel.overlap_grad_reduce ? o.dp_reduce_exposed_on_s : o.dp_reduce_exposed_off_s,
               fmt::format("off {:.3f} s, on {:.3f} s ({:.0f} x {:.3g}-parameter buckets)", o.dp_reduce_exposed_off_s,
                           o.dp_reduce_exposed_on_s, o.buckets, o.bucket_params));
    out += row(fmt::format("+ DP AG exposed (param_gather {})", on_off(plan.parallel.overlap_param_gather)),
               plan.parallel.overlap_param_gather ? o.dp_gather_exposed_on_s : o.dp_gather_exposed_off_s,
               fmt::format("off {:.3f} s, on {:.3f} s", o.dp_gather_exposed_off_s, o.dp_gather_exposed_on_s));
  }
  if (o.exposed_s > 0)
    out += row("step with these overlap options", o.step_time_s, "perfect overlap + the exposed lines above");
  out += fmt::format("  MFU {} of the {:g} TFLOP/s dense {} peak; {:.0f} TFLOP/s of model FLOPs achieved per GPU\n",
                     pct(r.mfu), r.peak_tflops, precision_name(plan.train), r.achieved_tflops_per_gpu);
  if (r.reported_step_s > 0)
    out += row(plan.train.reported_step_s > 0          ? "reported (train.reported_step_s)"
               : plan.train.reported_tflops_per_gpu > 0 ? "reported (train.reported_tflops_per_gpu)"
                                                        : "DeepSeek reported (180K GPU-h/T tok)",
               r.reported_step_s, fmt::format("{:.2f}x slower than this roofline", r.speedup_vs_reported));
  out += "\nFSDP (PP 1, ZeRO-3) on the same cluster: exposed communication share of the step\n ";
  for (const auto& pt : r.fsdp_sweep) out += fmt::format("  m={}: {}", pt.microbatches, pct(pt.exposed_share));
  out += "\n";
  return out;
}

}  // namespace stepsim
