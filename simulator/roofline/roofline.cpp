#include "simulator/roofline/roofline.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "workloads/traffic/ep_traffic.hpp"

#include "platforms/topology.hpp"
#include "schedules/registry.hpp"

#include "workloads/layers/layer_work.hpp"
#include "workloads/layers/op_sac.hpp"
#include "workloads/traffic/dp_collectives.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/memory/state_bytes.hpp"
#include "vocabulary/dtype_bytes.hpp"

namespace stepsim {
namespace {


ComputeTerms compute_terms(const Plan& plan, const ModelParams& p) {
  const double fp8 = plan.hardware.fp8_tflops * 1e12 * double(plan.gpus());
  const double bf16 = plan.hardware.bf16_tflops * 1e12 * double(plan.gpus());
  const bool fp8_gemms = plan.train.precision == Precision::FP8;
  const double tokens = double(plan.train.tokens_per_step());
  ComputeTerms t;
  t.matmul_flops = 6.0 * double(p.activated()) * tokens;
  t.bf16_matmul_flops = 6.0 * double(p.bf16_matmul()) * tokens;
  // Every layer's attention core for one sequence (sliding-window layers at their window), x sequences.
  const auto core = attention_core_flops_all_layers(plan.model, plan.train.seq_len);
  const double seqs = double(plan.train.global_batch);
  t.attention_flops = core.training() * seqs;
  // Model FLOPs count the attention core as forward + twice that in backward (no recompute).
  t.model_flops = t.matmul_flops + 3.0 * core.forward() * seqs;
  t.megatron_flops = megatron_flops(plan);
  // What the backward reruns: 2 FLOPs per recomputed parameter per token, plus attention cores.
  const Recompute rc = plan.parallel.recompute;
  if (rc.full()) {  // every layer's forward: N less the LM head, and the attention core
    t.recompute_bf16_flops = 2.0 * double(p.router * p.moe_layers) * tokens + core.forward() * seqs;
    t.recompute_flops = 2.0 * double(p.activated() - p.lm_head - p.final_norm) * tokens + core.forward() * seqs;
  } else {
    if (rc.has(Recompute::CoreAttn)) {
      t.recompute_flops += core.forward() * seqs;
      t.recompute_bf16_flops += core.forward() * seqs;
    }
    if (rc.has(Recompute::MlaUpProj)) t.recompute_flops += 2.0 * double(p.recomputed()) * tokens;
    if (rc.has(Recompute::Mlp))
      t.recompute_flops += 2.0 * double((p.dense_ffn - p.dense_ffn_bias) * p.dense_layers) * tokens;
    const double shared = double(p.shared_experts - p.shared_experts_bias);
    if (rc.has(Recompute::Moe)) {  // router (BF16), the token's routed experts, the shared experts
      const double routed = double(p.expert - p.expert_bias) * double(p.experts_per_token);
      t.recompute_bf16_flops += 2.0 * double(p.router * p.moe_layers) * tokens;
      t.recompute_flops += 2.0 * (double(p.router) + routed + shared) * double(p.moe_layers) * tokens;
    } else if (rc.has(Recompute::SharedExperts)) {
      t.recompute_flops += 2.0 * shared * double(p.moe_layers) * tokens;
    }
    if (rc.has(Recompute::TorchtitanOps))  // wk, wo and w3 (or fc2) of every layer; float8 linears: all
      for (const OpSacGemm& g : op_sac_recomputed_gemms(plan.model, plan.train.precision == Precision::FP8))
        t.recompute_flops += 2.0 * g.shape.n * g.shape.k * tokens * double(plan.model.num_hidden_layers);
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
  t.sm_tax_factor = double(plan.hardware.sms) / double(plan.hardware.sms - plan.taxed_comm_sms());
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
  // recompute, or the moe module, reruns the MoE layer's forward).
  const double passes = plan.parallel.recompute.full() || plan.parallel.recompute.has(Recompute::Moe) ? 3.0 : 2.0;
  // Copies of a token each direction (workloads/traffic/ep_traffic.hpp): DeepEP, one per remote
  // NVLink domain; Megatron's alltoall, one per routed expert on another GPU (k / ep per GPU of the
  // group); its allgather, a hierarchical ring of the group's tokens (IB: (ep - u) / u of each
  // token, u the group's GPUs per domain).
  const int64_t ep_size = RankLayout(plan).ep();
  const double k = double(m.num_experts_per_tok), ep_d = double(ep_size);
  const double u_g = double(std::min<int64_t>(ep_size, plan.nvlink_ranks()));
  const MoeDispatcher dispatcher = plan.parallel.moe_dispatcher;
  e.ib_copies_per_token = dispatcher == MoeDispatcher::DeepEP     ? e.remote_nodes
                          : dispatcher == MoeDispatcher::AllToAll ? k * (ep_d - u_g) / ep_d
                                                                  : (ep_d - u_g) / u_g;
  if (ep_size <= 1) e.ib_copies_per_token = 0;
  e.ib_bytes_per_gpu = passes * e.tokens_per_gpu * e.ib_copies_per_token * per_token;
  const double ib = plan.hardware.ib_GBps * 1e9;
  e.ib_s = e.ib_bytes_per_gpu / ib;
  // Fat tree: GPU 0's IB copies go to the same local rank of each other NVLink domain of its group
  // (equal bytes each under balanced routing); those under another leaf share ib / oversubscription.
  const FabricShape fabric = FabricShape::of(plan);
  const int64_t u = plan.nvlink_ranks(), domains = std::max<int64_t>(1, RankLayout(plan).ep() / u);
  if (domains > 1) {
    int64_t climbing = 0;
    for (int64_t d = 1; d < domains; ++d) climbing += fabric.crosses_spine(0, d * u) ? 1 : 0;
    e.spine_bytes_per_gpu = e.ib_bytes_per_gpu * double(climbing) / double(domains - 1);
    e.spine_s = e.spine_bytes_per_gpu / (ib / plan.cluster.oversubscription);
  }
  const double g = double(plan.nvlink_ranks());
  const double nvlink_copies = dispatcher == MoeDispatcher::DeepEP     ? k * (g - 1) / g  // an upper bound
                               : dispatcher == MoeDispatcher::AllToAll ? k * (u_g - 1) / ep_d
                                                                       : ep_d * (u_g - 1) / u_g;
  e.nvlink_bytes_per_gpu = passes * e.tokens_per_gpu * nvlink_copies * per_token;
  e.nvlink_s = e.nvlink_bytes_per_gpu / (plan.hardware.nvlink_GBps * 1e9);
  const int64_t ep = ep_size;
  if (ep > 1 && ep <= plan.nvlink_ranks()) {
    // DeepEP: each of the group's other GPUs holds one of a token's k experts with probability
    // 1 - (1 - 1/ep)^k; one copy goes to each such GPU (as the replay's flows carry them). The
    // other dispatchers' copies are those above, all inside the domain.
    const double touch = 1.0 - std::pow(1.0 - 1.0 / double(ep), double(m.num_experts_per_tok));
    const double copies = dispatcher == MoeDispatcher::DeepEP ? touch * double(ep - 1) : nvlink_copies;
    e.in_node_bytes_per_gpu = passes * e.tokens_per_gpu * copies * per_token;
    e.in_node_s = e.in_node_bytes_per_gpu / (plan.hardware.nvlink_GBps * 1e9);
  }
  const double etp = double(RankLayout(plan).etp());
  e.etp_bytes_per_gpu = passes * e.tokens_per_gpu * k * (etp - 1) * 2 * e.combine_bytes_per_copy;
  e.etp_s = e.etp_bytes_per_gpu / (plan.hardware.nvlink_GBps * 1e9);
  return e;
}

// Hierarchical collective of `params` per member over a group with `local` members per node on
// `nodes` nodes: the IB stage moves the member's 1/local slice among nodes, NVLink the rest.
double ib_params(double params, int64_t local, int64_t nodes) {
  return params / double(local) * (1.0 - 1.0 / double(nodes));
}

// Data-parallel collectives for a plan with `pp` pipeline ranks (1 for FSDP).
// Members of `group` on the node of its first member (groups spread evenly over their nodes).
int64_t members_per_node(const std::vector<int64_t>& group, int64_t gpus_per_node) {
  return std::count_if(group.begin(), group.end(),
                       [&](int64_t x) { return x / gpus_per_node == group.front() / gpus_per_node; });
}

DpTerms dp_terms(const Plan& plan, const ModelParams& p, int64_t pp) {
  DpTerms d;
  const int64_t g = plan.nvlink_ranks();  // GPUs that reach each other over NVLink
  Plan shaped = plan;
  shaped.parallel.pp = pp;
  const RankLayout layout(shaped);
  // The rank layout's groups: replicas x CP ranks share the non-expert weights, the expert-DP
  // group an EP slot's experts.
  const std::vector<int64_t> group = layout.shard_group(0), experts = layout.expert_shard_group(0);
  d.non_expert_local = members_per_node(group, g);
  d.non_expert_ib_nodes = std::max<int64_t>(1, int64_t(group.size()) / d.non_expert_local);
  d.expert_local = members_per_node(experts, g);
  d.expert_ib_nodes = std::max<int64_t>(1, int64_t(experts.size()) / d.expert_local);
  const HeldParams held = model_held_params(plan, p);  // one TP rank's share
  d.non_expert_params_per_gpu = held.non_expert / double(pp);
  d.expert_params_per_gpu = held.expert / double(pp);
  const double ib_param_count =
      ib_params(d.non_expert_params_per_gpu, d.non_expert_local, d.non_expert_ib_nodes) +
      ib_params(d.expert_params_per_gpu, d.expert_local, d.expert_ib_nodes);
  // BF16 parameters, or the FP8 GEMMs' weights in their own format (their count only then).
  const HeldParams gathered =
      gathered_bytes(plan, held, plan.parallel.fp8_param_gather ? model_quantised_params(plan, p) : HeldParams{});
  d.allgather_ib_bytes = ib_params(gathered.non_expert / double(pp), d.non_expert_local, d.non_expert_ib_nodes) +
                         ib_params(gathered.expert / double(pp), d.expert_local, d.expert_ib_nodes);
  d.reducescatter_ib_bytes = ib_param_count * plan.parallel.grad_reduce_bytes();
  // A ring runs at its slowest edge: an edge between leaves gets the NIC's uplink share. GPU 0's
  // rings: non-expert over the stage's domains (rail peers g apart), experts one EP group apart.
  const FabricShape fabric = FabricShape::of(plan);
  const int64_t span = layout.ep_group_span();  // expert-DP members lie this far apart
  bool climbs = false;
  for (int64_t k = 0; k < d.non_expert_ib_nodes; ++k)
    climbs = climbs || fabric.crosses_spine(k * g, (k + 1) % d.non_expert_ib_nodes * g);
  for (int64_t k = 0; k < d.expert_ib_nodes && d.expert_ib_nodes > 1; ++k)
    climbs = climbs || fabric.crosses_spine(k * span * d.expert_local, (k + 1) % d.expert_ib_nodes * span * d.expert_local);
  d.ring_GBps = plan.hardware.ib_GBps / (climbs ? plan.cluster.oversubscription : 1.0);
  const double ib = d.ring_GBps * 1e9;
  d.allgather_s = d.allgather_ib_bytes / ib;
  d.reducescatter_s = d.reducescatter_ib_bytes / ib;
  d.zero1_s = d.allgather_s + d.reducescatter_s;
  // HSDP: once per step, a ring all-reduce of each gradient shard across the shard groups.
  const auto all_reduce_bytes = [&](double shard_params, size_t replicas) {
    const double r = double(replicas);
    return replicas > 1 ? 2.0 * (r - 1.0) / r * shard_params * plan.parallel.grad_reduce_bytes() : 0.0;
  };
  d.hsdp_allreduce_s = (all_reduce_bytes(d.non_expert_params_per_gpu / double(group.size()),
                                         layout.shard_replicas(0).size()) +
                        all_reduce_bytes(d.expert_params_per_gpu / double(experts.size()),
                                         layout.expert_shard_replicas(0).size())) /
                       ib;
  d.fsdp_per_microbatch_s = 2.0 * d.allgather_s + d.reducescatter_s;
  return d;
}

// Residual stream sends (BF16 activations forward, gradients backward) of the busiest rank.
void pp_terms(const Plan& plan, Roofline& r) {
  const auto& par = plan.parallel;
  const RankLayout layout(plan);
  if (layout.pp() <= 1) return;
  // 1F1B: one send each way per microbatch; DualPipeV's two chunks double that on middle ranks.
  r.pp_sends_per_microbatch = std::llround(sched::make_schedule(plan)->sends_per_microbatch());
  const double micro_seqs = double(plan.train.global_batch) / double(plan.dp()) / double(par.microbatches);
  // Each GPU sends its sequence shard (1 / (tp x cp) of the microbatch).
  const double bytes = micro_seqs * double(plan.train.seq_len) * double(plan.model.hidden_size) * kBf16Bytes /
                       double(layout.token_split());
  // Neighbouring stages are a stage's GPUs apart: another NVLink domain unless a stage is smaller
  // than one, and over the spines when the two NICs sit under different leaves.
  const bool crosses_nodes = plan.stage_gpus() >= plan.nvlink_ranks();
  const bool climbs = FabricShape::of(plan).crosses_spine(0, plan.stage_gpus());
  r.pp_link_GBps = !crosses_nodes ? plan.hardware.nvlink_GBps
                   : climbs       ? plan.hardware.ib_GBps / plan.cluster.oversubscription
                                  : plan.hardware.ib_GBps;
  r.pp_comm_s = double(r.pp_sends_per_microbatch) * double(par.microbatches) * bytes / (r.pp_link_GBps * 1e9);
}

TpCpTerms tp_cp_terms(const Plan& plan) {
  TpCpTerms t;
  const auto& par = plan.parallel;
  const RankLayout layout(plan);
  const ModelConfig& m = plan.model;
  const double micro_seqs = double(plan.train.global_batch) / double(plan.dp()) / double(par.microbatches);
  const double micro_tokens = micro_seqs * double(plan.train.seq_len);
  t.tokens_per_microbatch = micro_tokens / double(layout.cp());
  const double per_rank = double(par.microbatches) / double(layout.pp());  // x layers of the model
  t.tp_collectives = per_rank * (double(m.dense_layers()) * tp_collectives_per_layer(plan, false) +
                                 double(m.moe_layers()) * tp_collectives_per_layer(plan, true));
  t.tp_bytes_per_collective = layout.tp() > 1 ? tp_collective_bytes(plan, t.tokens_per_microbatch) : 0.0;
  t.tp_bytes_per_gpu = t.tp_collectives * t.tp_bytes_per_collective;
  // Replicated KV heads: the QKV output's all-gather and its gradient's reduce-scatter per layer.
  t.tp_qkv_bytes_per_gpu = per_rank * double(m.num_hidden_layers) * tp_qkv_collectives_per_layer(plan) *
                           tp_qkv_collective_bytes(plan, t.tokens_per_microbatch);
  t.tp_bytes_per_gpu += t.tp_qkv_bytes_per_gpu;
  const int64_t g = plan.nvlink_ranks();
  t.tp_link_GBps = layout.tp() <= g ? plan.hardware.nvlink_GBps : plan.hardware.ib_GBps;
  // CP's exchanges of a layer's attention (parallel.cp_comm_type: model_parallel_comm.hpp).
  double cp_layer_bytes = 0, cp_layer_exchanges = 0;
  for (const bool backward : {false, true})
    for (const CpExchangeBytes& x : cp_exchanges(plan, micro_tokens, backward)) cp_layer_bytes += x.bytes, ++cp_layer_exchanges;
  t.cp_collectives = per_rank * double(m.num_hidden_layers) * cp_layer_exchanges;
  t.cp_bytes_per_gpu = per_rank * double(m.num_hidden_layers) * cp_layer_bytes;
  t.cp_bytes_per_collective = cp_layer_exchanges > 0 ? cp_layer_bytes / cp_layer_exchanges : 0.0;
  t.cp_link_GBps = layout.token_split() <= g ? plan.hardware.nvlink_GBps : plan.hardware.ib_GBps;
  return t;
}

// GEMM seconds per GPU of one TP block part for one microbatch, at the GEMM precision's rate: its
// column- and row-parallel projections (tp_gemm_share) and all of its GEMMs (a W part's time).
struct BlockGemms {
  double column_s = 0, row_s = 0, all_s = 0;
};

BlockGemms block_gemms(const Plan& plan, int64_t layer, LayerPart part, double sequences, double routed_rows = 0) {
  const LayerWork w = layer_work(plan, layer, sequences, routed_rows);
  BlockGemms g;
  for (const Kernel& k : w.part(part).kernels) {
    const TpGemmShare share = tp_gemm_share(plan, k.name);
    const double s = k.flops / k.rate_share / (plan.hardware.gemm_tflops(k.precision) * 1e12 * double(RankLayout(plan).tp()));
    g.column_s += share.column * s;
    g.row_s += share.row * s;
    g.all_s += s;
  }
  return g;
}

OverlapTerms overlap_terms(const Plan& plan, const Roofline& r) {
  OverlapTerms o;
  const auto& par = plan.parallel;
  const RankLayout layout(plan);
  const double m = double(par.microbatches);
  if (layout.tp() > 1) {
    const double c = r.tpcp.tp_bytes_per_collective / (r.tpcp.tp_link_GBps * 1e9);
    const double stretch = ub_gemm_stretch(plan.hardware);
    // One CP rank's share of a microbatch, in sequences (layer_work takes whole sequences).
    const double seqs = r.tpcp.tokens_per_microbatch / double(plan.train.seq_len);
    // The weight gradient the compute stream runs just before a dense block's backward (the other
    // block's of the layer: split_backward, W not deferred), behind which the previous block's
    // input-gradient reduce-scatter and this block's output-gradient all-gather move.
    const auto sep = sched::make_schedule(plan);
    const bool w_hides = par.split_backward && !sep->defers_weight_gradients();
    double off = 0, on = 0, margin = 0;
    // A block: forward all-gather + reduce-scatter; backward all-gather of the output gradient,
    // behind `w` seconds of weight gradient (and the reduce-scatter before it when `rs_first`).
    const auto add = [&](const BlockGemms& g, double w, bool rs_first, double count) {
      const double row = g.row_s * stretch, bwd_ring = ring_exchange_s(g.row_s, c, layout.tp()) - g.row_s;
      const double lead = rs_first ? c : 0.0;  // comm ahead of the all-gather on the TP stream
      off += count * (2.0 * c + std::max(0.0, lead + c - w));
      on += count * (ring_exchange_s(g.column_s, c, layout.tp()) - g.column_s +
                     split_reduce_scatter_s(row, c, kUbReduceScatterSplits) - row + std::max(0.0, lead - w) +
                     std::max(0.0, bwd_ring - std::max(0.0, w - lead)));
      margin += count * g.row_s * (stretch - 1.0);
    };
    const ModelConfig& mc = plan.model;
    const double per_rank = m / double(layout.pp());
    if (mc.dense_layers() > 0) {
      const BlockGemms attn = block_gemms(plan, 0, LayerPart::AttnF, seqs);
      const BlockGemms mlp = block_gemms(plan, 0, LayerPart::MlpF, seqs);
      const double attn_w = w_hides ? block_gemms(plan, 0, LayerPart::AttnW, seqs).all_s : 0.0;
      const double mlp_w = w_hides ? block_gemms(plan, 0, LayerPart::MlpW, seqs).all_s : 0.0;
      add(attn, mlp_w, true, per_rank * double(mc.dense_layers()));
      add(mlp, attn_w, true, per_rank * double(mc.dense_layers()));
    }
    // An MoE layer's attention: its backward follows the experts and the dispatch-gradient
    // all-to-all, long after the TP stream emptied; its all-gather waits for that all-to-all.
    if (mc.moe_layers() > 0)
      add(block_gemms(plan, mc.first_k_dense_replace, LayerPart::AttnF, seqs), 0.0, false,
          per_rank * double(mc.moe_layers()));
    o.tp_exposed_off_s = off;
    o.tp_exposed_on_s = on;
    o.tp_sm_margin_s = margin;
  }
  if (par.zero != 3) {
    // The first stage: one of the rank's chunks (two for interleaved and the V schedules, whose
    // other chunk's collectives run while this one still computes).
    const double chunks = double(sched::make_schedule(plan)->chunks_per_rank());
    const double params = (r.dp.non_expert_params_per_gpu + r.dp.expert_params_per_gpu) / chunks;
    const double reduce_s = r.dp.reducescatter_s / chunks, gather_s = r.dp.allgather_s / chunks;
    o.bucket_params = ddp_bucket_params(plan);
    o.buckets = params > 0 ? std::ceil(params / o.bucket_params) : 0.0;
    // The cut runs from the end of the model. The buckets touching the first layer (with the
    // embedding) are reduced only once its backward ends, the last thing before the optimizer,
    // and gathered before the first forward can start: those are exposed whatever else overlaps.
    const HeldParams layer = layer_held_params(plan, r.params, 0);
    const double first_item = std::min(params, layer.non_expert + layer.expert + double(r.params.embedding) / double(layout.tp()));
    const double tail = params > 0 ? params - o.bucket_params * std::floor((params - first_item) / o.bucket_params) : 0.0;
    // Without overlap_grad_reduce Megatron-Core keeps the chunk in one bucket: its gather is all exposed.
    const double tail_share = !par.overlap_grad_reduce ? 1.0 : params > 0 ? tail / params : 0.0;
    const double per_microbatch = r.compute_s / m / chunks;  // one microbatch through the stage
    // Off: the rank's reduce-scatters all wait for its last backward.
    o.dp_reduce_exposed_off_s = r.dp.reducescatter_s;
    o.dp_reduce_exposed_on_s = std::max(tail_share * reduce_s, reduce_s - 2.0 / 3.0 * per_microbatch);
    o.dp_gather_exposed_off_s = r.dp.allgather_s;
    const double first = tail_share * gather_s;
    o.dp_gather_exposed_on_s = first + std::max(0.0, gather_s - first - per_microbatch / 3.0);
  }
  o.exposed_s = (par.tp_comm_overlap ? o.tp_exposed_on_s + o.tp_sm_margin_s : o.tp_exposed_off_s) +
                (par.overlap_grad_reduce ? o.dp_reduce_exposed_on_s : o.dp_reduce_exposed_off_s) +
                (par.overlap_param_gather ? o.dp_gather_exposed_on_s : o.dp_gather_exposed_off_s);
  o.step_time_s = r.step_time_s + o.exposed_s;
  return o;
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
  r.ep_comm_s = std::max(r.ep.ib_s, r.ep.spine_s) + r.ep.in_node_s + r.ep.etp_s;
  pp_terms(plan, r);
  const bool fsdp = plan.parallel.zero == 3;
  r.dp = dp_terms(plan, r.params, RankLayout(plan).pp());
  const double m = double(plan.parallel.microbatches);
  // ZeRO-2 keeps only a gradient shard, so it reduce-scatters after every microbatch.
  r.dp_comm_s = fsdp                      ? r.dp.fsdp_per_microbatch_s * m + r.dp.hsdp_allreduce_s
                : plan.parallel.zero == 2 ? r.dp.allgather_s + m * r.dp.reducescatter_s
                                          : r.dp.zero1_s;
  r.tpcp = tp_cp_terms(plan);
  r.tp_comm_s = r.tpcp.tp_bytes_per_gpu / (r.tpcp.tp_link_GBps * 1e9);
  r.cp_comm_s = r.tpcp.cp_bytes_per_gpu / (r.tpcp.cp_link_GBps * 1e9);

  r.comm_s = r.ep_comm_s + r.pp_comm_s + r.dp_comm_s + r.tp_comm_s + r.cp_comm_s;
  r.bubble_share = sched::make_schedule(plan)->bubble_share();
  r.bubble_s = r.bubble_share * r.compute_s;
  // Perfect overlap: communication hides behind compute until it outgrows it.
  r.exposed_comm_s = std::max(0.0, r.comm_s - r.compute_s);
  r.step_time_s = std::max(r.compute_s, r.comm_s) + r.bubble_s;
  r.tokens_per_s_per_gpu = r.tokens_per_step / r.step_time_s / double(r.gpus);
  r.ep_share_of_compute = r.ep_comm_s / r.compute_s;
  r.reported_step_s = reported_step_s(plan);
  r.speedup_vs_reported = r.reported_step_s / r.step_time_s;
  r.peak_tflops = plan.hardware.peak_tflops(plan.train.precision, plan.train.low_precision);
  r.mfu = mfu(plan, r, r.step_time_s);
  r.achieved_tflops_per_gpu = r.terms.model_flops / r.step_time_s / double(r.gpus) / 1e12;
  r.overlap = overlap_terms(plan, r);

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
  // A logged TFLOP/s per GPU is the release's FLOP count over the step: invert it.
  if (plan.train.reported_tflops_per_gpu > 0)
    if (const double flops = megatron_flops(plan); flops > 0)
      return flops / (plan.train.reported_tflops_per_gpu * 1e12 * double(plan.gpus()));
  if (!is_deepseek_v3(plan.model)) return 0;
  return kDeepSeekGpuHoursPerTrillionTokens * 3600.0 / 1e12 * double(plan.train.tokens_per_step()) / double(plan.gpus());
}

std::string reported_step_label(const Plan& plan) {
  if (plan.train.reported_step_s > 0) return "reported";
  if (plan.train.reported_tflops_per_gpu > 0)
    return fmt::format("reported {:g} TFLOP/s per GPU (Megatron-Core {}'s count)", plan.train.reported_tflops_per_gpu,
                       to_string(plan.software.megatron_flops));
  return "DeepSeek reported";
}

double megatron_flops(const Plan& plan) {
  const ModelConfig& m = plan.model;
  const double b = double(plan.train.global_batch), s = double(plan.train.seq_len), h = double(m.hidden_size);
  const double heads = double(m.num_attention_heads);
  const double gate = m.gated_mlp() ? 1.5 : 1.0;
  // MLP per token and layer, as both counts write it: 12 h x width x (3/2 gated); MoE layers count
  // k routed experts and the shared ones (Megatron-Core v0.12's count; r0.8 knew no shared experts).
  const double shared = double(m.n_shared_experts * m.moe_intermediate_size + m.shared_expert_intermediate_size);
  const auto mlp = [&](int64_t l) {
    const double width = m.is_moe_layer(l) ? double(m.moe_intermediate_size) * double(m.num_experts_per_tok) + shared
                                           : double(m.intermediate_size);
    return 12 * h * width * gate;
  };
  double per_token = 6 * h * double(m.vocab_size);  // the logits
  if (m.is_mla()) {
    // Megatron-Core v0.12's MLA count (the first release that counts MLA), per token and layer:
    // 6 x (q down and up, kv down and up with their norms, the rope key, the output projection)
    // + 6 s x the causal core (heads x (qk + rope) / 2 for the scores, heads x v / 2 for the values).
    const double qk = double(m.qk_nope_head_dim), rope = double(m.qk_rope_head_dim), v = double(m.v_head_dim);
    const double q_term = m.q_lora_rank > 0 ? double(m.q_lora_rank) * (h + heads * (qk + rope) + 1) : h * heads * (qk + rope);
    const double attention = 6 * (q_term + double(m.kv_lora_rank) * (h + heads * (qk + v) + 1) + h * rope + heads * v * h) +
                             6 * s * (heads * (qk + rope) / 2 + heads * v / 2);
    for (int64_t l = 0; l < m.num_hidden_layers; ++l) per_token += attention + mlp(l);
    return b * s * per_token;
  }
  // Megatron-Core r0.8's count (the Megatron table's release) takes the attention scores over all
  // S^2; v0.12's only the causal half (software.megatron_flops).
  const double groups = double(m.kv_heads());
  const double query_ratio = double(qk_head_dim(m)) * heads / h;
  const double scores = plan.software.megatron_flops == MegatronFlops::V012 ? s / h / 2 : s / h;
  const double attention = 12 * h * h * (1 + groups / heads + scores) * query_ratio;
  for (int64_t l = 0; l < m.num_hidden_layers; ++l) per_token += attention + mlp(l);
  return b * s * per_token;
}

double mfu(const Plan& plan, const Roofline& r, double step_s) {
  return r.terms.model_flops / (step_s * double(plan.gpus()) * plan.hardware.peak_tflops(plan.train.precision, plan.train.low_precision) * 1e12);
}

}  // namespace stepsim
