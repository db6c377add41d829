#include "simulator/config/validate_plan.hpp"

#include "simulator/config/config_loader.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "platforms/topology.hpp"
#include "schedules/registry.hpp"
#include "vocabulary/config_error.hpp"
#include "vocabulary/plan_names.hpp"
#include "simulator/config/straggler_config.hpp"
#include "simulator/config/validate_sizes.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"

namespace stepsim {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

// Largest divisor of n that is <= limit, to suggest a value that would work.
int64_t divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

void validate_model(const Plan& p, const auto& fail) {
  const ModelConfig& m = p.model;
  if (m.first_k_dense_replace > m.num_hidden_layers)
    fail("model.first_k_dense_replace", str(m.first_k_dense_replace) + " exceeds num_hidden_layers " +
                                            str(m.num_hidden_layers) + "; lower it");
  if (m.is_mla()) {
    if (m.qk_nope_head_dim + m.qk_rope_head_dim <= 0)
      fail("model.qk_nope_head_dim", "MLA (kv_lora_rank > 0) needs qk_nope_head_dim + qk_rope_head_dim > 0");
    if (m.v_head_dim <= 0) fail("model.v_head_dim", "MLA (kv_lora_rank > 0) needs v_head_dim > 0");
  } else if (m.head_dim == 0 && m.hidden_size % m.num_attention_heads != 0) {
    fail("model.num_attention_heads", str(m.num_attention_heads) + " does not divide hidden_size " +
                                          str(m.hidden_size) + "; set model.head_dim or change the head count");
  }
  if (m.num_key_value_heads > 0 && m.num_attention_heads % m.num_key_value_heads != 0)
    fail("model.num_key_value_heads", str(m.num_key_value_heads) + " does not divide num_attention_heads " +
                                          str(m.num_attention_heads));
  if (m.is_moe() && m.moe_layers() == 0)
    fail("model.first_k_dense_replace", str(m.first_k_dense_replace) + " makes all " + str(m.num_hidden_layers) +
                                            " layers dense, yet n_routed_experts is " + str(m.n_routed_experts) +
                                            "; lower first_k_dense_replace or set n_routed_experts=0 for a dense model");
  if (m.dense_layers() > 0 && m.intermediate_size <= 0)
    fail("model.intermediate_size", "dense FFN layers need intermediate_size > 0");
  if (m.swiglu_limit > 0 && !m.gated_mlp())
    fail("model.swiglu_limit", "clamps a gated activation's gate and up inputs, and model.hidden_act " +
                                   std::string(name_of(kHiddenActs, m.hidden_act)) + " is not gated; use 0");
  if (!m.is_moe()) return;
  if (m.moe_intermediate_size <= 0) fail("model.moe_intermediate_size", "an MoE model needs moe_intermediate_size > 0");
  if (m.num_experts_per_tok < 1 || m.num_experts_per_tok > m.n_routed_experts)
    fail("model.num_experts_per_tok", "must be between 1 and n_routed_experts (" + str(m.n_routed_experts) + ")");
  if (m.n_routed_experts % m.n_group != 0)
    fail("model.n_group", str(m.n_group) + " does not divide n_routed_experts " + str(m.n_routed_experts));
  if (m.topk_group > m.n_group)
    fail("model.topk_group", str(m.topk_group) + " exceeds n_group " + str(m.n_group) + "; lower it");
  if (m.num_experts_per_tok > m.topk_group * (m.n_routed_experts / m.n_group))
    fail("model.num_experts_per_tok", "more experts per token than the topk_group groups hold; raise topk_group");
}

// Tensor and context parallelism: the groups must tile a stage and a node, and the split
// dimensions must divide.
void validate_tensor_context(const Plan& p, const auto& fail) {
  const auto& par = p.parallel;
  const ModelConfig& m = p.model;
  const int64_t stage_gpus = p.stage_gpus(), g = p.cluster.gpus_per_node;
  if (par.tp > 1 || par.cp > 1) {
    if (par.tp > stage_gpus || par.cp > stage_gpus || par.tp * par.cp > stage_gpus || stage_gpus % (par.tp * par.cp) != 0)
      fail(par.tp > 1 ? "parallel.tp" : "parallel.cp",
           "tp x cp = " + str(par.tp * par.cp) + " does not divide the " + str(stage_gpus) +
               " GPUs of a pipeline stage; use divisors of it");
  }
  if (par.tp > 1) {
    if ((par.tp < g && g % par.tp != 0) || (par.tp > g && par.tp % g != 0))
      fail("parallel.tp", str(par.tp) + " must divide cluster.gpus_per_node (" + str(g) +
                              ") or be a multiple of it, so TP groups tile the nodes");
    if (m.num_attention_heads % par.tp != 0)
      fail("parallel.tp", str(par.tp) + " does not divide the " + str(m.num_attention_heads) +
                              " attention heads; use a divisor such as " + str(divisor_at_most(m.num_attention_heads, par.tp)));
    // Megatron's rule (TransformerConfig: num_query_groups must be a multiple or a divisor of the
    // TP size): KV heads split over TP, or fewer of them each held whole by tp / kv ranks.
    const int64_t kv = m.kv_heads();
    if (kv % par.tp != 0 && par.tp % kv != 0)
      fail("parallel.tp", str(par.tp) + " neither divides nor is a multiple of the " + str(kv) +
                              " key-value heads, so they can neither split over TP nor be replicated whole (Megatron "
                              "refuses it too); use a divisor or multiple of " + str(kv) + " such as " +
                              str(divisor_at_most(kv, par.tp)));
    if (m.dense_layers() > 0 && m.intermediate_size % par.tp != 0)
      fail("parallel.tp", str(par.tp) + " does not divide intermediate_size " + str(m.intermediate_size) +
                              "; use a divisor such as " + str(divisor_at_most(m.intermediate_size, par.tp)));
  }
  if (!m.sliding_layers.empty() && m.sliding_layers.back() >= m.num_hidden_layers)
    fail("model.sliding_layers", "layer " + str(m.sliding_layers.back()) + " is beyond the model's " +
                                     str(m.num_hidden_layers) + " layers (numbered from 0); list layers 0 to " +
                                     str(m.num_hidden_layers - 1));
  if (par.cp > 1) {
    if (m.sliding_window > 0)
      fail("parallel.cp", str(par.cp) + " with sliding-window attention (model.sliding_window " + str(m.sliding_window) +
                              "): context parallelism's K/V exchange is modelled for full causal attention only; use cp 1");
    if (p.train.seq_len % (2 * par.cp) != 0)
      fail("parallel.cp", "seq_len " + str(p.train.seq_len) + " must split into 2 x cp = " + str(2 * par.cp) +
                              " equal chunks (causal load balance); use a cp with 2 cp dividing it");
    // a2a swaps the sequence split for a head split: Transformer Engine asserts that the query heads
    // and the K/V heads each TP rank holds divide by cp (fewer K/V heads than TP ranks: one each).
    const int64_t q_heads = m.num_attention_heads / std::max<int64_t>(1, par.tp);
    const int64_t kv_heads = std::max<int64_t>(1, m.kv_heads() / std::max<int64_t>(1, par.tp));
    if (par.cp_comm_type == CpCommType::A2a && (q_heads % par.cp != 0 || kv_heads % par.cp != 0))
      fail("parallel.cp_comm_type",
           "a2a splits the attention heads over CP, but each TP rank holds " + str(q_heads) + " query and " +
               str(kv_heads) + " K/V heads, which cp " + str(par.cp) +
               " does not divide; use parallel.cp_comm_type=p2p (or a cp dividing both)");
  }
  if (par.fsdp_shard_size > 0 && par.zero == 3) {  // without ZeRO-3 the key is unread: check_needs says so
    const int64_t holders = p.dp() * par.cp;  // GPUs holding the same weights
    if (par.fsdp_shard_size > holders || holders % par.fsdp_shard_size != 0)
      fail("parallel.fsdp_shard_size", str(par.fsdp_shard_size) + " does not divide the " + str(holders) +
                                           " GPUs holding the same weights; use a divisor such as " +
                                           str(divisor_at_most(holders, par.fsdp_shard_size)));
    if (m.is_moe() && (par.fsdp_shard_size * par.tp) % (par.ep * par.expert_tp) != 0)
      fail("parallel.fsdp_shard_size", "a shard group must hold whole EP groups: fsdp_shard_size x tp must be a "
                                       "multiple of parallel.ep x parallel.expert_tp (" +
                                           str(par.ep * par.expert_tp) + ")");
  }
}

void validate_parallel(const Plan& p, const auto& fail) {
  const auto& par = p.parallel;
  const auto gpus = p.gpus();
  // One model replica takes TP x CP x PP GPUs: the fix names a pipeline that fits beside the TP and
  // CP sizes, or the nodes the plan needs (a divisor of the GPUs alone would not fit with TP).
  const int64_t replica = par.pp * par.tp * par.cp, inner = par.tp * par.cp;
  if (gpus % par.pp != 0 || (inner > 1 && gpus % replica != 0)) {
    if (inner == 1)
      fail("parallel.pp", str(par.pp) + " does not divide the " + str(gpus) + " GPUs; use a divisor such as " +
                              str(divisor_at_most(gpus, par.pp)));
    const int64_t g = p.cluster.gpus_per_node;
    int64_t nodes = 1;
    while ((nodes * g) % replica != 0 && nodes < replica) ++nodes;
    const std::string fits = gpus % inner == 0 ? " or parallel.pp=" + str(divisor_at_most(gpus / inner, par.pp)) +
                                                     " (TP x CP x PP = " + str(inner * divisor_at_most(gpus / inner, par.pp)) +
                                                     " GPUs)"
                                               : "";
    fail("parallel.pp", "TP " + str(par.tp) + " x CP " + str(par.cp) + " x PP " + str(par.pp) + " = " + str(replica) +
                            " GPUs hold one model replica, which the " + str(gpus) + " GPUs (cluster.nodes " +
                            str(p.cluster.nodes) + " x " + str(g) + ") cannot; use cluster.nodes=" + str(nodes) +
                            " (or a multiple)" + fits);
  }
  const int64_t path_stages = sched::path_stages(p);
  if (!par.stage_layers.empty()) {
    // Layers placed as given: one count per stage, together the model's layers (a stage may hold none).
    const std::string pipeline = str(path_stages) + " stages (schedule " + std::string(par.schedule.name()) +
                                 ", parallel.pp " + str(par.pp) +
                                 (path_stages != par.pp ? ", " + str(path_stages / std::max<int64_t>(1, par.pp)) + " per rank" : "") + ")";
    if (int64_t(par.stage_layers.size()) != path_stages)
      fail("parallel.stage_layers", "lists " + str(int64_t(par.stage_layers.size())) + " stages, but the pipeline has " +
                                        pipeline + "; give one layer count per stage in layer order, or remove it "
                                        "to let stepsim balance the stages");
    int64_t sum = 0;
    for (const int64_t n : par.stage_layers) sum += n;
    if (sum != p.model.num_hidden_layers)
      fail("parallel.stage_layers", "places " + str(sum) + " layers, but model.num_hidden_layers is " +
                                        str(p.model.num_hidden_layers) + "; the counts must add up to it");
  } else if (path_stages > p.model.num_hidden_layers) {
    fail("parallel.pp", str(path_stages) + " pipeline stages exceed the " + str(p.model.num_hidden_layers) +
                            " layers; use fewer ranks");
  }
  const int64_t stage_gpus = p.stage_gpus();
  validate_tensor_context(p, fail);
  // Before the expert checks, whose divisor search counts down from ep.
  if (par.ep > gpus) fail("parallel.ep", str(par.ep) + " ranks exceed the " + str(gpus) + " GPUs; use at most " + str(gpus));
  if (p.model.is_moe()) {
    if (par.ep > p.model.n_routed_experts)
      fail("parallel.ep", str(par.ep) + " ranks exceed the " + str(p.model.n_routed_experts) +
                              " routed experts; use at most " + str(p.model.n_routed_experts));
    if (p.model.n_routed_experts % par.ep != 0)
      fail("parallel.ep", str(par.ep) + " does not divide the " + str(p.model.n_routed_experts) +
                              " routed experts; use a divisor such as " +
                              str(divisor_at_most(p.model.n_routed_experts, par.ep)));
  }
  if (stage_gpus % par.ep != 0)
    fail("parallel.ep", str(par.ep) + " does not divide the " + str(stage_gpus) +
                            " GPUs of a pipeline stage; use a divisor such as " + str(divisor_at_most(stage_gpus, par.ep)));
  const int64_t g = p.cluster.gpus_per_node;
  if (par.expert_tp > 1) {
    // Megatron's expert grid: expert TP fastest, inside a node; an EP group ep GPUs expert_tp apart.
    if (g % par.expert_tp != 0)
      fail("parallel.expert_tp", str(par.expert_tp) + " must divide cluster.gpus_per_node (" + str(g) +
                                     ") so each expert's matrices split inside one node");
    if (p.model.moe_intermediate_size % par.expert_tp != 0)
      fail("parallel.expert_tp", str(par.expert_tp) + " does not divide model.moe_intermediate_size (" +
                                     str(p.model.moe_intermediate_size) + "); use a divisor such as " +
                                     str(divisor_at_most(p.model.moe_intermediate_size, par.expert_tp)));
    if (stage_gpus % (par.ep * par.expert_tp) != 0)
      fail("parallel.expert_tp", "parallel.ep x expert_tp (" + str(par.ep * par.expert_tp) + ") does not divide the " +
                                     str(stage_gpus) + " GPUs of a pipeline stage; lower one of them");
    if (par.moe_dispatcher == MoeDispatcher::DeepEP)
      fail("parallel.expert_tp", "DeepEP dispatches to whole experts (Megatron's flex dispatcher needs expert tensor "
                                 "parallelism 1); set parallel.expert_tp=1 or parallel.moe_dispatcher=alltoall");
  }
  // Megatron asserts these beside its all-to-all overlap (TransformerConfig.__post_init__).
  if (par.moe_overlap_ep_comm && par.recompute.full())
    fail("parallel.moe_overlap_ep_comm", "full recompute reruns the all-to-alls the overlap hides, which Megatron "
                                         "refuses; set parallel.recompute to another policy or the overlap to false");
  // The moe module reruns them too (recomputed_all_to_all), outside the overlapped pairs.
  if (par.moe_overlap_ep_comm && par.recompute.has(Recompute::Moe))
    fail("parallel.moe_overlap_ep_comm", "the moe recompute module reruns the dispatch and combine the overlap hides; "
                                         "remove moe from parallel.recompute or set the overlap to false");
  if (par.moe_overlap_ep_comm && par.overlap_shared_expert)
    fail("parallel.moe_overlap_ep_comm", "Megatron refuses it with the shared-expert overlap; set "
                                         "parallel.overlap_shared_expert=false");
  if (par.moe_paged_stash && par.cpu_offload_layers > 0)
    fail("parallel.moe_paged_stash", "Megatron refuses the paged stash with CPU offloading; set "
                                     "parallel.cpu_offload_layers=0 or the stash to false");
  // An EP group's members lie among ep x expert_tp consecutive GPUs: whole nodes, or inside one.
  const int64_t span = par.ep * par.expert_tp;
  const std::string spanned = par.expert_tp > 1 ? " x parallel.expert_tp = " + str(span) : "";
  if (span > g && span % g != 0)
    fail("parallel.ep", str(par.ep) + spanned + " must be a multiple of cluster.gpus_per_node (" + str(g) +
                            ") so expert groups span whole nodes");
  if (span < g && g % span != 0)
    fail("parallel.ep", str(par.ep) + spanned + " must divide cluster.gpus_per_node (" + str(g) + ")");

  const auto schedule = sched::make_unchecked_schedule(p);
  const bool fsdp = schedule->shards_parameters();
  // What the schedule fixes (fsdp: no pipeline and ZeRO-3, in one message so one retry fixes it)
  // before the batch checks below, whose messages would otherwise come first.
  if (const auto needed = schedule->settings_needed(p); !needed.empty()) fail(needed.front().key, needed.front().message);

  // Sequences per data-parallel replica; FSDP tolerates an uneven split (some GPUs get one more).
  const double per_replica = p.sequences_per_replica();
  const int64_t most = int64_t(std::ceil(per_replica));
  // A batch given in tokens is named, and fixed, in tokens: the config holds no train.global_batch.
  const bool in_tokens = p.train.global_batch_tokens > 0;
  const std::string batch_key = in_tokens ? "train.global_batch_tokens" : "train.global_batch";
  const std::string sequences = str(p.train.global_batch) + (p.train.global_batch == 1 ? " sequence" : " sequences");
  const std::string batch = in_tokens ? str(p.train.global_batch_tokens) + " tokens (" + sequences +
                                            " of train.seq_len " + str(p.train.seq_len) + ")"
                                      : sequences;
  const auto in_unit = [&](int64_t sequences) {
    return in_tokens ? str(sequences * p.train.seq_len) + " tokens" : str(sequences);
  };
  if (p.train.global_batch < p.dp())
    fail(batch_key, batch + " leave some of the " + str(p.dp()) + " data-parallel replicas idle; use at least " +
                        in_unit(p.dp()));
  if (!fsdp && p.train.global_batch % p.dp() != 0)
    fail(batch_key, batch + " do not split evenly over " + str(p.dp()) + " pipeline replicas; use a multiple of " +
                        in_unit(p.dp()));
  if (par.microbatches > most)
    fail("parallel.microbatches", str(par.microbatches) + " exceeds the " + str(most) +
                                      " sequences per replica; use at most " + str(most));
  if (!fsdp && (p.train.global_batch / p.dp()) % par.microbatches != 0)
    fail("parallel.microbatches", str(par.microbatches) + " does not divide the " +
                                      str(p.train.global_batch / p.dp()) + " sequences per replica; pick a divisor");
}

// torchtitan's per-op checkpointing is modelled for the block it was written for
// (workloads/layers/op_sac.hpp).
void validate_recompute(const Plan& p, const auto& fail) {
  if (p.parallel.recompute != Recompute::TorchtitanOp) return;
  const char* with = p.model.is_moe()                       ? "an MoE model (its experts' grouped GEMMs are not aten.mm)"
                     : p.model.is_mla()                     ? "MLA attention"
                     : p.parallel.tp > 1                    ? "tensor parallelism (its collectives would be recomputed too)"
                                                            : nullptr;
  if (with != nullptr)
    fail("parallel.recompute", std::string("torchtitan-op models torchtitan's per-op checkpointing of a dense Llama-style "
                                           "block at TP 1, not with ") + with + "; use full, selective or none");
}

// Activation offloading as Megatron-LM allows it (TransformerConfig's checks: no pipeline
// parallelism, no recomputation, fewer layers than the model has) and as Transformer Engine's
// synchronizer runs it: one microbatch's forward and backward at a time, a whole layer per op.
void validate_cpu_offload(const Plan& p, const auto& fail) {
  const ParallelConfig& par = p.parallel;
  if (par.cpu_offload_layers == 0) return;
  const std::string k = "parallel.cpu_offload_layers";
  const int64_t layers = p.model.num_hidden_layers;
  if (par.cpu_offload_layers >= layers)
    fail(k, str(par.cpu_offload_layers) + " of the model's " + str(layers) +
                " layers: Transformer Engine keeps the last layer on the GPU; use at most " + str(layers - 1));
  if (par.pp > 1)
    fail(k, "Megatron-LM offloads activations only without pipeline parallelism; set parallel.pp=1 or "
            "parallel.cpu_offload_layers=0");
  if (par.recompute != Recompute::None)
    fail(k, "Megatron-LM does not offload activations it recomputes; set parallel.recompute=none or "
            "parallel.cpu_offload_layers=0");
  // Lone chunks are split only where pipeline chunks hold MoE layers (not under FSDP).
  const auto schedule = sched::make_schedule(p);
  if (par.split_lone_chunks && p.model.is_moe() && !schedule->shards_parameters())
    fail(k, "offloads whole layers, and parallel.split_lone_chunks halves them; set one of them off");
  // Megatron-Bridge asserts it for per-layer graphs (gpt_full_te_layer_autocast_spec.py: "Cudagraphs
  // not supported" with cpu_offloading).
  if (p.software.cuda_graphs == CudaGraphs::Layers)
    fail(k, "Megatron's per-layer CUDA graphs do not run with activation offloading; set software.cuda_graphs=none "
            "or parallel.cpu_offload_layers=0");
  if (par.moe_overlap_ep_comm && p.model.is_moe())
    fail(k, "Transformer Engine's offload runs one microbatch at a time, and parallel.moe_overlap_ep_comm runs one "
            "microbatch's backward beside the next one's forward; set one of them off");
  if (schedule->in_flight_microbatches(0) > 1)
    fail(k, "Transformer Engine's offload runs one microbatch's forward and backward at a time, and schedule " +
                std::string(p.parallel.schedule.name()) + " keeps several forwards in flight; use schedule fsdp or 1f1b");
  if (!(p.hardware.host_link_GBps > 0))
    fail("hardware.host_link_GBps", "missing: parallel.cpu_offload_layers copies activations to host memory; set the "
                                    "GPU's measured host-to-device copy rate in GB/s (about 55 for a PCIe 5 x16 link)");
}

// The schedule's own limits (microbatches, ranks, what the rest of the plan must be).
void validate_schedule(const Plan& p, const auto& fail) {
  try {
    sched::make_schedule(p);
  } catch (const sched::ScheduleError& e) {
    fail(e.key(), e.what());
  }
}

void validate_scenario(const Plan& p, const auto& fail) {
  const ScenarioConfig& s = p.scenario;
  if (s.routing == Routing::Hot && s.hot_experts > p.model.n_routed_experts)
    fail("scenario.hot_experts", str(s.hot_experts) + " exceeds the " + str(p.model.n_routed_experts) +
                                     " routed experts; lower it");
  if (s.hot_share > 1) fail("scenario.hot_share", "is a share of the tokens, between 0 and 1");
  if (s.layer_correlation > 1) fail("scenario.layer_correlation", "must be between 0 and 1");
  if (s.routing == Routing::File && s.load_file.empty())
    fail("scenario.load_file", "routing file needs a load file; set scenario.load_file=PATH (CSV or JSON)");
}

// Efficiencies are shares of the stated rates; above 1 means the rate itself is too low.
void validate_hardware_profile(const Plan& p, const auto& fail) {
  const HardwareConfig& h = p.hardware;
  const std::pair<const char*, double> shares[] = {
      {"hardware.gemm_efficiency", h.gemm_efficiency},           {"hardware.wgrad_gemm_efficiency", h.wgrad_gemm_efficiency},
      {"hardware.bf16_gemm_efficiency", h.bf16_gemm_efficiency}, {"hardware.attention_efficiency", h.attention_efficiency},
      {"hardware.a2a_efficiency", h.a2a_efficiency}};
  for (const auto& [key, v] : shares)
    if (v > 1)
      fail(key, "is a share of the stated rate and must be at most 1, got " + std::to_string(v) +
                    "; raise the rate (fp8_tflops, bf16_tflops, ib_GBps) instead");
}

// sim.compute: predicted times each op from the per-op cost model's keys (a preset sets them all);
// the speed-of-light profile's efficiencies and non-matmul knob would go unread, so they are refused.
void validate_compute_model(const Plan& p, const auto& fail) {
  const HardwareConfig& h = p.hardware;
  if (p.sim.compute == ComputeModel::SpeedOfLight) return;
  const std::pair<const char*, double> needed[] = {
      {"hardware.hbm_GBps", h.hbm_GBps},
      {"hardware.hbm_efficiency", h.hbm_efficiency},
      {"hardware.gemm_bf16_peak_share", h.gemm_bf16_peak_share},
      {"hardware.gemm_fp8_peak_share", h.gemm_fp8_peak_share},
      {"hardware.gemm_tile_m", double(h.gemm_tile_m)},
      {"hardware.gemm_tile_n", double(h.gemm_tile_n)},
      {"hardware.attention_fwd_tflops", h.attention_fwd_tflops},
      {"hardware.attention_bwd_tflops", h.attention_bwd_tflops}};
  for (const auto& [key, v] : needed)
    if (!(v > 0))
      fail(key, "missing; sim.compute: predicted times every op from the hardware's per-op cost model: set "
                "hardware.preset (" + hardware_preset_names() + ") or the key, or sim.compute=speed-of-light");
  // FP8 attention at the preset's published FP8 curve for the format (no curve: no figure to use).
  if (p.train.runs_fp8_attention() && !h.attention_curve(p.train.low_precision).set()) {
    const bool mx = p.train.low_precision == LowPrecision::Mxfp8;
    const std::string keys = std::string("hardware.attention_") + (mx ? "mxfp8" : "fp8");
    fail(keys + (h.attention_curve(p.train.low_precision).fwd_tflops > 0 ? "_bwd_tflops" : "_fwd_tflops"),
         std::string("missing: train.fp8_attention runs the attention core in ") + (mx ? "MXFP8" : "per-tensor FP8") +
             ", and " + (h.name.empty() ? std::string("this GPU") : h.name) + " has no published rate for it; set " +
             keys + "_{fwd,bwd}_{tflops,seq_half} from a kernel benchmark, or train.fp8_attention=false");
  }
  // Eager composite ops write BF16 (or FP32); none of them writes a GEMM's quantised input.
  if (!p.software.fused_elementwise && p.train.precision == Precision::FP8 &&
      (p.software.fused_norm_cast || p.software.norm_block_cast() || p.software.fused_activation_cast))
    fail("software.fused.elementwise",
         "false runs the norms and the activation as eager composite ops, which cannot write the next GEMM's FP8 input "
         "as software.fused.norm_cast / norm_block_cast / activation_cast say; set those false, or "
         "software.fused.elementwise=true");
  // Transformer Engine's fused grouped MLP: what its op fuser matches and Megatron-Core lets it run
  // (ops/fused/grouped_mlp.py fuse_grouped_mlp_ops; experts.py _is_fused_impl_supported).
  if (p.software.fused_grouped_mlp) {
    const std::string k = "software.fused.grouped_mlp";
    const bool block_scaled = p.train.precision == Precision::FP8 && !p.train.fp8_recipe_applies();  // MXFP8, NVFP4
    if (!p.model.is_moe()) fail(k, "fuses the routed experts' MLP, and this model has none; set it false");
    if (p.model.hidden_act != HiddenAct::Silu)
      fail(k, "Transformer Engine fuses a gated SiLU only (SwiGLU, or GPT-OSS's clamped GLU), and this model's "
              "activation is another; set it false");
    if (!p.parallel.moe_grouped_gemm)
      fail(k, "runs the experts as grouped GEMMs; set parallel.moe_grouped_gemm=true or the key false");
    if (p.software.grouped_gemm_per_expert)
      fail(k, "runs each of the experts' GEMMs as one grouped kernel; set software.grouped_gemm_per_expert=false");
    if (!block_scaled)
      fail(k, "Transformer Engine fuses it under MXFP8 or NVFP4 only; set train.precision to mxfp8 or nvfp4, or the key false");
    if (p.parallel.expert_tp > 1)
      fail(k, "Megatron-Core runs it without expert tensor parallelism; set parallel.expert_tp=1 or the key false");
    if (p.parallel.recompute.has(Recompute::MoeAct))
      fail(k, "the activation that the moe_act recompute reruns runs inside the GEMM here; remove moe_act from "
              "parallel.recompute or set the key false");
  }
  // FlashAttention-2 at the preset's published FA2 curve (no curve: no figure); it has no FP8 kernel.
  if (p.software.attention_kernel == AttentionKernel::Flash2) {
    if (p.train.runs_fp8_attention())
      fail("software.attention_kernel", "flash2 (FlashAttention-2) has no FP8 kernel, and train.fp8_attention runs the "
                                        "attention core in FP8; use software.attention_kernel=fused or train.fp8_attention=false");
    if (!h.attention_flash2.set())
      fail(std::string("hardware.attention_flash2") + (h.attention_flash2.fwd_tflops > 0 ? "_bwd_tflops" : "_fwd_tflops"),
           "missing: software.attention_kernel flash2 runs FlashAttention-2, and " +
               (h.name.empty() ? std::string("this GPU") : h.name) +
               " has no published rate for it; set hardware.attention_flash2_{fwd,bwd}_{tflops,seq_half} from a kernel "
               "benchmark, or software.attention_kernel=fused (the preset's fused kernel, e.g. cuDNN's)");
  }
  // An earlier cuDNN release's curve needs its own release and the preset curve's release to be
  // told apart; cuDNN's versions are integers of 4 digits (8.9.7: 8907) or more (9.10.2: 91002).
  for (const auto& [key, v] : {std::pair{"hardware.attention_cudnn_version", h.attention_cudnn_version},
                               std::pair{"hardware.attention_early_cudnn_version", h.attention_early_cudnn_version},
                               std::pair{"software.cudnn_version", p.software.cudnn_version}})
    if (v > 0 && v < 1000)
      fail(key, std::to_string(v) + " is no cuDNN version: give cuDNN's own integer (major x 10000 + minor x 100 + "
                                    "patch: 91002 for 9.10.2; 8907 for 8.9.7), or 0 for none");
  const HardwareConfig::AttentionCurve& early = h.attention_early;
  if (early.fwd_tflops > 0 || early.bwd_tflops > 0 || early.fwd_seq_half > 0 || early.bwd_seq_half > 0 ||
      h.attention_early_cudnn_version > 0) {
    const std::pair<const char*, bool> needs[] = {
        {"hardware.attention_early_fwd_tflops", early.fwd_tflops > 0},
        {"hardware.attention_early_bwd_tflops", early.bwd_tflops > 0},
        {"hardware.attention_early_cudnn_version", h.attention_early_cudnn_version > 0},
        {"hardware.attention_cudnn_version", h.attention_cudnn_version > 0}};
    for (const auto& [key, ok] : needs)
      if (!ok)
        fail(key, "missing: hardware.attention_early_* is the BF16 attention curve an earlier cuDNN release measured "
                  "on this GPU, read where software.cudnn_version is older than hardware.attention_cudnn_version; "
                  "set its rates, its release and the preset curve's release, or leave attention_early_* out");
    if (h.attention_early_cudnn_version >= h.attention_cudnn_version)
      fail("hardware.attention_early_cudnn_version",
           std::to_string(h.attention_early_cudnn_version) + " is not older than hardware.attention_cudnn_version " +
               std::to_string(h.attention_cudnn_version) +
               ": the early curve is an earlier release's; swap them, or leave attention_early_* out");
  }
  const std::pair<const char*, bool> unread[] = {
      {"hardware.gemm_efficiency", h.gemm_efficiency != 1},
      {"hardware.wgrad_gemm_efficiency", h.wgrad_gemm_efficiency != 0},
      {"hardware.bf16_gemm_efficiency", h.bf16_gemm_efficiency != 1},
      {"hardware.attention_efficiency", h.attention_efficiency != 1},
      {"hardware.nonmatmul_s_per_token_layer", h.nonmatmul_s_per_token_layer != 0}};
  for (const auto& [key, set] : unread)
    if (set)
      fail(key, "only read with sim.compute: speed-of-light (the predicted model times kernels from their shapes "
                "and bytes); set sim.compute=speed-of-light, or leave it out (calibrate a predicted profile with "
                "`stepsim calibrate`)");
}

}  // namespace

void validate_plan(const Plan& p) {
  const auto fail = [&](const std::string& key, const std::string& what) {
    throw ConfigError(p.source + ": " + key + ": " + what);
  };
  // Products every later stage forms; an overflow would wrap to 0 and divide by it.
  constexpr int64_t kMaxGpus = int64_t(1) << 24;
  if (p.cluster.nodes > kMaxGpus / p.cluster.gpus_per_node)
    fail("cluster.nodes", str(p.cluster.nodes) + " nodes x " + str(p.cluster.gpus_per_node) +
                              " GPUs exceed the " + str(kMaxGpus) + " GPUs stepsim models; lower it");
  if (p.train.global_batch > std::numeric_limits<int64_t>::max() / p.train.seq_len)
    fail("train.global_batch", "global_batch x seq_len overflows the tokens per step; lower it");
  validate_stragglers(p);
  if (p.cluster.nvlink_domain > 0 && p.cluster.nvlink_domain % p.cluster.gpus_per_node != 0)
    fail("cluster.nvlink_domain", str(p.cluster.nvlink_domain) + " GPUs is not a whole number of " +
                                      str(p.cluster.gpus_per_node) + "-GPU nodes; use a multiple of cluster.gpus_per_node");
  // After the plan's own checks: the domain's ranks depend on a valid EP size.
  const auto check_fabric = [&] {
    if (const std::string why = fabric_problem(FabricShape::of(p)); !why.empty()) throw ConfigError(p.source + ": " + why);
  };
  if (p.workload.kind == WorkloadKind::Synthetic) {
    // One abstract pipeline: only the schedule's own limits apply.
    if (p.workload.w_s > p.workload.b_s)
      fail("workload.w_s", "the weight-gradient part cannot exceed the whole backward workload.b_s");
    validate_schedule(p, fail);
    if (p.parallel.cpu_offload_layers > 0)
      fail("parallel.cpu_offload_layers", "offloads model layers' activations; the synthetic pipeline has none: drop it");
    if (p.cluster.topology != Topology::Star || p.cluster.nvlink_domain > 0)
      fail(p.cluster.topology != Topology::Star ? "cluster.topology" : "cluster.nvlink_domain",
           "the synthetic pipeline runs on its own one-GPU nodes over a star; drop the fabric keys");
    check_fabric();
    return;
  }
  validate_model(p, fail);
  validate_parallel(p, fail);
  validate_recompute(p, fail);
  validate_schedule(p, fail);
  validate_cpu_offload(p, fail);
  validate_sizes(p);
  check_fabric();
  validate_hardware_profile(p, fail);
  validate_compute_model(p, fail);
  // Memory is given in GiB per GPU; bytes or a cluster total by mistake would make every plan fit.
  if (p.hardware.memory_GiB > 1024 * 1024) {
    char v[64];
    std::snprintf(v, sizeof v, "%g", p.hardware.memory_GiB);
    fail("hardware.memory_GiB", std::string(v) + " GiB per GPU is more than any GPU holds; give one GPU's memory in "
                                "GiB (80 for an H800)");
  }
  if (p.hardware.comm_sms >= p.hardware.sms)
    fail("hardware.comm_sms", "communication cannot take all " + str(p.hardware.sms) + " SMs; use fewer");
  if (p.taxed_comm_sms() >= p.hardware.sms)
    fail("software.deepep_sms", "DeepEP cannot take all " + str(p.hardware.sms) + " SMs; use fewer");
  if (p.parallel.tp_comm_overlap && p.parallel.tp > 1 && p.hardware.sms <= kUbCommSms)
    fail("parallel.tp_comm_overlap", "userbuffers' reduce-scatter takes " + str(kUbCommSms) + " of the GPU's " +
                                         str(p.hardware.sms) + " SMs (hardware.sms), leaving its GEMM none; "
                                         "raise hardware.sms or set parallel.tp_comm_overlap=false");
  validate_scenario(p, fail);
}

}  // namespace stepsim
