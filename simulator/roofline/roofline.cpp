#include "simulator/roofline/roofline.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/deepseek/ep_traffic.hpp"

namespace stepsim {
namespace {

constexpr double kBf16Bytes = 2, kFp32Bytes = 4;

ComputeTerms compute_terms(const Plan& plan, const ModelParams& p) {
  const double fp8 = plan.hardware.fp8_tflops * 1e12 * double(plan.gpus());
  const double bf16 = plan.hardware.bf16_tflops * 1e12 * double(plan.gpus());
  const bool fp8_gemms = plan.train.precision == Precision::FP8;
  const double tokens = double(plan.train.tokens_per_step());
  ComputeTerms t;
  t.matmul_flops = 6.0 * double(p.activated()) * tokens;
  t.bf16_matmul_flops = 6.0 * double(p.bf16_matmul()) * tokens;
  const auto core = attention_core_flops(plan.model, plan.train.seq_len);
  const double layers_x_seqs = double(plan.model.num_hidden_layers) * double(plan.train.global_batch);
  t.attention_flops = core.training() * layers_x_seqs;
  // Model FLOPs count the attention core as forward + twice that in backward (no recompute).
  t.model_flops = t.matmul_flops + 3.0 * core.forward() * layers_x_seqs;
  // What the backward reruns: 2 FLOPs per recomputed parameter per token, plus attention cores.
  switch (plan.parallel.recompute) {
    case Recompute::None: break;
    case Recompute::DeepSeek: t.recompute_flops = 2.0 * double(p.recomputed()) * tokens; break;
    case Recompute::Selective: t.recompute_flops = t.recompute_bf16_flops = core.forward() * layers_x_seqs; break;
    case Recompute::Full:  // every layer's forward: N less the LM head, and the attention core
      t.recompute_bf16_flops = 2.0 * double(p.router * p.moe_layers) * tokens + core.forward() * layers_x_seqs;
      t.recompute_flops = 2.0 * double(p.activated() - p.lm_head - p.final_norm) * tokens + core.forward() * layers_x_seqs;
      break;
  }
  if (fp8_gemms) {
    t.matmul_fp8_s = (t.matmul_flops - t.bf16_matmul_flops) / fp8;
    t.matmul_bf16_s = t.bf16_matmul_flops / bf16;
    t.bf16_correction_s = t.matmul_bf16_s - t.bf16_matmul_flops / fp8;
  } else {
    t.matmul_bf16_s = t.matmul_flops / bf16;
  }
  t.attention_s = t.attention_flops / bf16;
  t.recompute_s = (t.recompute_flops - t.recompute_bf16_flops) / (fp8_gemms ? fp8 : bf16) + t.recompute_bf16_flops / bf16;
  t.sol_s = t.matmul_fp8_s + t.matmul_bf16_s + t.attention_s + t.recompute_s;
  t.sm_tax_factor = double(plan.hardware.sms) / double(plan.hardware.sms - plan.hardware.comm_sms);
  return t;
}

EpTerms ep_terms(const Plan& plan, const RoutingStats& routing) {
  EpTerms e;
  const ModelConfig& m = plan.model;
  if (!m.is_moe()) return e;
  e.remote_nodes = routing.remote_nodes;
  // Every token passes every MoE layer once; spread evenly over the GPUs.
  e.tokens_per_gpu = double(plan.train.tokens_per_step()) * double(m.moe_layers()) / double(plan.gpus());
  e.dispatch_bytes_per_copy = dispatch_bytes_per_token(plan);  // FP8 + 1x128 scales, or BF16
  e.combine_bytes_per_copy = combine_bytes_per_token(m);
  const double per_token = e.dispatch_bytes_per_copy + e.combine_bytes_per_copy;
  // Forward dispatch + combine, and the same pair again in backward (and once more when full
  // recompute reruns the forward).
  const double passes = plan.parallel.recompute == Recompute::Full ? 3.0 : 2.0;
  e.ib_bytes_per_gpu = passes * e.tokens_per_gpu * e.remote_nodes * per_token;
  e.ib_s = e.ib_bytes_per_gpu / (plan.hardware.ib_GBps * 1e9);
  const double g = double(plan.cluster.gpus_per_node);
  e.nvlink_bytes_per_gpu = passes * e.tokens_per_gpu * double(m.num_experts_per_tok) * (g - 1) / g * per_token;
  e.nvlink_s = e.nvlink_bytes_per_gpu / (plan.hardware.nvlink_GBps * 1e9);
  const int64_t ep = plan.parallel.ep;
  if (ep > 1 && ep <= plan.cluster.gpus_per_node) {
    // Each of the group's other GPUs holds one of a token's k experts with probability
    // 1 - (1 - 1/ep)^k; one copy goes to each such GPU (as the replay's flows carry them).
    const double touch = 1.0 - std::pow(1.0 - 1.0 / double(ep), double(m.num_experts_per_tok));
    e.in_node_bytes_per_gpu = passes * e.tokens_per_gpu * touch * double(ep - 1) * per_token;
    e.in_node_s = e.in_node_bytes_per_gpu / (plan.hardware.nvlink_GBps * 1e9);
  }
  return e;
}

// Hierarchical collective of `params` per member over a group with `local` members per node on
// `nodes` nodes: the IB stage moves the member's 1/local slice among nodes, NVLink the rest.
double ib_params(double params, int64_t local, int64_t nodes) {
  return params / double(local) * (1.0 - 1.0 / double(nodes));
}

// Data-parallel collectives for a plan with `pp` pipeline ranks (1 for FSDP).
DpTerms dp_terms(const Plan& plan, const ModelParams& p, int64_t pp) {
  DpTerms d;
  const int64_t g = plan.cluster.gpus_per_node;
  const int64_t dp = plan.gpus() / pp;
  const int64_t ep = plan.parallel.ep;
  const int64_t edp = dp / ep;
  // Stage-major layout: a stage's dp GPUs are consecutive, so its DP group fills whole nodes.
  d.non_expert_local = std::min(dp, g);
  d.non_expert_ib_nodes = std::max<int64_t>(1, dp / g);
  // Expert replicas sit one EP group apart: on different nodes once an EP group fills a node.
  d.expert_local = std::max<int64_t>(1, std::min(edp, g / std::min(ep, g)));
  d.expert_ib_nodes = std::max<int64_t>(1, edp / d.expert_local);
  d.non_expert_params_per_gpu = double(p.non_expert_total()) / double(pp);
  d.expert_params_per_gpu = double(p.routed_experts_total()) / double(pp) / double(ep);
  const double ib_param_count =
      ib_params(d.non_expert_params_per_gpu, d.non_expert_local, d.non_expert_ib_nodes) +
      ib_params(d.expert_params_per_gpu, d.expert_local, d.expert_ib_nodes);
  d.allgather_ib_bytes = ib_param_count * kBf16Bytes;
  d.reducescatter_ib_bytes = ib_param_count * kFp32Bytes;
  const double ib = plan.hardware.ib_GBps * 1e9;
  d.allgather_s = d.allgather_ib_bytes / ib;
  d.reducescatter_s = d.reducescatter_ib_bytes / ib;
  d.zero1_s = d.allgather_s + d.reducescatter_s;
  d.fsdp_per_microbatch_s = 2.0 * d.allgather_s + d.reducescatter_s;
  return d;
}

// Residual stream sends (BF16 activations forward, gradients backward) of the busiest rank.
void pp_terms(const Plan& plan, Roofline& r) {
  const auto& par = plan.parallel;
  if (par.pp <= 1) return;
  // 1F1B: one send each way per microbatch; DualPipeV's two chunks double that on middle ranks.
  r.pp_sends_per_microbatch = par.schedule == Schedule::DualPipeV && par.pp > 2 ? 4 : 2;
  const double micro_seqs = double(plan.train.global_batch) / double(plan.dp()) / double(par.microbatches);
  const double bytes = micro_seqs * double(plan.train.seq_len) * double(plan.model.hidden_size) * kBf16Bytes;
  // Neighbouring stages are dp GPUs apart: another node unless a stage is smaller than a node.
  const bool crosses_nodes = plan.dp() >= plan.cluster.gpus_per_node;
  r.pp_link_GBps = crosses_nodes ? plan.hardware.ib_GBps : plan.hardware.nvlink_GBps;
  r.pp_comm_s = double(r.pp_sends_per_microbatch) * double(par.microbatches) * bytes / (r.pp_link_GBps * 1e9);
}

double bubble_share(const Plan& plan) {
  const auto& par = plan.parallel;
  const double p = double(par.pp), m = double(par.microbatches);
  switch (par.schedule) {
    // (PP-1)(F+B) over m (F+B) of work.
    case Schedule::OneFOneB: return (p - 1) / m;
    // (PP-1)(F&B + B - 3W) with B = 2F, W = F, F&B = F + B = 3F: 2F (PP-1) over 2 chunks x m x 3F.
    case Schedule::DualPipeV: return (p - 1) * 2.0 / (6.0 * m);
    case Schedule::Fsdp:
    case Schedule::Capture: return 0;
  }
  return 0;
}

}  // namespace

Roofline compute_roofline(const Plan& plan) {
  Roofline r;
  r.params = count_params(plan.model);
  r.activated_params = r.params.activated();
  r.total_params = r.params.total();
  r.tokens_per_step = double(plan.train.tokens_per_step());
  r.gpus = plan.gpus();
  r.routing = routing_stats(plan);

  r.terms = compute_terms(plan, r.params);
  r.compute_s = r.terms.sol_s * r.terms.sm_tax_factor;
  r.ep = ep_terms(plan, r.routing);
  r.ep_comm_s = r.ep.ib_s + r.ep.in_node_s;
  pp_terms(plan, r);
  const bool fsdp = plan.parallel.zero == 3;
  r.dp = dp_terms(plan, r.params, plan.parallel.pp);
  r.dp_comm_s = fsdp ? r.dp.fsdp_per_microbatch_s * double(plan.parallel.microbatches) : r.dp.zero1_s;

  r.comm_s = r.ep_comm_s + r.pp_comm_s + r.dp_comm_s;
  r.bubble_share = bubble_share(plan);
  r.bubble_s = r.bubble_share * r.compute_s;
  // Perfect overlap: communication hides behind compute until it outgrows it.
  r.exposed_comm_s = std::max(0.0, r.comm_s - r.compute_s);
  r.step_time_s = std::max(r.compute_s, r.comm_s) + r.bubble_s;
  r.tokens_per_s_per_gpu = r.tokens_per_step / r.step_time_s / double(r.gpus);
  r.ep_share_of_compute = r.ep_comm_s / r.compute_s;
  r.reported_step_s = reported_step_s(plan);
  r.speedup_vs_reported = r.reported_step_s / r.step_time_s;
  r.peak_tflops = plan.hardware.peak_tflops(plan.train.precision);
  r.mfu = mfu(plan, r, r.step_time_s);
  r.achieved_tflops_per_gpu = r.terms.model_flops / r.step_time_s / double(r.gpus) / 1e12;

  // The seed's FSDP "pincer": exposed share as microbatches grow, same cluster without PP.
  const DpTerms fsdp_dp = dp_terms(plan, r.params, 1);
  std::vector<int64_t> counts = {1, 2, 4, 8};
  if (fsdp && std::find(counts.begin(), counts.end(), plan.parallel.microbatches) == counts.end())
    counts.push_back(plan.parallel.microbatches);
  for (const int64_t m : counts) {
    const double comm = r.ep_comm_s + fsdp_dp.fsdp_per_microbatch_s * double(m);
    const double step = std::max(r.compute_s, comm);
    r.fsdp_sweep.push_back({m, (step - r.compute_s) / step});
  }
  return r;
}

double reported_step_s(const Plan& plan) {
  if (plan.train.reported_step_s > 0) return plan.train.reported_step_s;
  if (!is_deepseek_v3(plan.model)) return 0;
  return kDeepSeekGpuHoursPerTrillionTokens * 3600.0 / 1e12 * double(plan.train.tokens_per_step()) / double(plan.gpus());
}

double mfu(const Plan& plan, const Roofline& r, double step_s) {
  return r.terms.model_flops / (step_s * double(plan.gpus()) * plan.hardware.peak_tflops(plan.train.precision) * 1e12);
}

}  // namespace stepsim
