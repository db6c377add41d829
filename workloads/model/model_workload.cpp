#include "workloads/model/model_workload.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <numeric>

#include "platforms/cluster_platform.hpp"
#include "platforms/degraded_hardware.hpp"
#include "schedules/overlap_pairs.hpp"
#include "schedules/pipeline_flow.hpp"
#include "schedules/registry.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/kernel_efficiency.hpp"
#include "workloads/layers/local_batch.hpp"
#include "workloads/model/model_program.hpp"
#include "workloads/traffic/model_parallel_comm.hpp"
#include "workloads/memory/state_bytes.hpp"
#include "vocabulary/model_params.hpp"

namespace stepsim {

ModelWorkload::ModelWorkload(const Plan& plan)
    : plan_(plan),
      layout_(plan),
      schedule_(sched::make_schedule(plan)),
      streams_(sched::pipeline_channels(*schedule_), plan_.parallel.cpu_offload_layers > 0),
      stages_(partition_layers(plan)),
      routing_(routing_stats(plan)),
      ep_layout_(stepsim::ep_layout(plan, routing_)),
      loads_(plan),
      params_(count_params(plan.model)),
      spec_(platform_spec(plan)) {
  if (plan.sim.compute == ComputeModel::SpeedOfLight) speed_of_light_costs();
  else predicted_costs();
  uniform_batch_ = plan.train.global_batch % plan.dp() == 0 &&
                   (plan.train.global_batch / plan.dp()) % plan.parallel.microbatches == 0;
  if (uniform_batch_) uniform_sequences_ = double(microbatch_sequences(plan, 0, 0));
  // Every replica (and EP group) runs the same program on the same loads while routing is
  // balanced and nothing perturbs a GPU, so by symmetry one stands for all; `auto` takes it.
  reduced_ = plan.sim.mode != SimMode::Full;
  if (reduced_ && plan.scenario.perturbed() && !mark_perturbed_groups()) {  // a slow GPU or jitter makes replicas differ
    reduced_ = false;
    full_reason_ = "stragglers or jitter make the replicas differ, so every GPU is replayed";
  }
  // Uneven expert loads make the GPUs of an EP group differ, but every EP group runs the same
  // loads: one group per pipeline rank still stands for the others when every group holds the
  // same batch. Otherwise replay every GPU.
  if (reduced_ && !loads_.balanced()) {
    if (!uniform_batch_) {
      reduced_ = false;
      full_reason_ = "uneven expert loads with uneven batches: EP groups differ, so every GPU is replayed";
    } else if (plan.parallel.zero != 3) {
      ep_group_reduced_ = true;
    }
  }
  // Uneven batches: each EP group's mean load per microbatch, asked for by every compute op.
  if (!uniform_batch_) {
    const int64_t ep = layout_.ep(), m = plan.parallel.microbatches;
    group_mean_sequences_.assign(static_cast<size_t>(layout_.ep_groups() * m), 0.0);
    for (int64_t gpu = 0; gpu < layout_.stage_gpus(); ++gpu)
      for (int64_t mb = 0; mb < m; ++mb)
        group_mean_sequences_[size_t(layout_.ep_group_index(gpu) * m + mb)] += sequences(gpu, mb) / double(ep);
  }
  memory_ = std::make_unique<ModelMemory>(*this);
  fold_hidden_nvlink_ = plan.sim.fidelity == SimFidelity::Fast && lock_step_nvlink_idle();
}

// Every GPU of an EP group runs the same ops at the same times (balanced loads, even batches,
// nothing perturbed) and the all-to-all is alone on NVLink: no TP or CP collectives, no FSDP
// gathers beside it, no pipeline transfers inside a node, no IB traffic forwarded over NVLink
// (multi-plane). Then an NVLink leg that its IB leg outlasts never sets a time.
bool ModelWorkload::lock_step_nvlink_idle() const {
  const ParallelConfig& par = plan_.parallel;
  return loads_.balanced() && uniform_batch_ && !plan_.scenario.perturbed() && layout_.tp() == 1 && layout_.cp() == 1 &&
         par.zero != 3 && plan_.cluster.topology != Topology::MultiPlane &&
         plan_.stage_gpus() % plan_.nvlink_ranks() == 0;
}

ModelWorkload::~ModelWorkload() = default;

// Speed of light: each kernel's FLOPs at the stated rate over the profile's efficiency for its kind.
void ModelWorkload::speed_of_light_costs() {
  const int64_t layers = plan_.model.num_hidden_layers;
  // Compute ops are charged in FLOPs at the FP8 rate: BF16 work counts fp8 / bf16 times.
  const double bf16_weight = plan_.hardware.fp8_tflops / plan_.hardware.bf16_tflops;
  costs_.resize(size_t(layers * kLayerParts));
  // TP splits every GEMM but the experts' by tp and runs experts on the 1/tp sequence shard; CP
  // gives each rank 1/cp of the tokens and of the (load-balanced causal) attention: per GPU, every
  // per-sequence cost is 1 / (tp x cp) of the replica's.
  const double split = double(layout_.token_split());
  for (int64_t l = 0; l < layers; ++l) {
    const LayerWork one = layer_work(plan_, l, 1.0, 0.0);
    const LayerWork per_row = layer_work(plan_, l, 0.0, 1.0);  // the routed experts' work per token-expert row
    for (int part = 0; part < kLayerParts; ++part) {
      PartCost& c = costs_[size_t(l * kLayerParts + part)];
      // The hardware profile's efficiencies are folded in here: FLOPs a GPU at the stated rate
      // would need to take as long as the real kernels (all 1 at speed of light).
      const LayerPart lp = LayerPart(part);
      c.fp8_flops_per_seq = effective_flops(one.parts[part], lp, Precision::FP8, plan_.hardware) / split;
      c.bf16_flops_per_seq = effective_flops(one.parts[part], lp, Precision::BF16, plan_.hardware) / split;
      c.nonmatmul_s_per_seq = one.parts[part].nonmatmul_s / split;
      PartWork shared;
      for (const Kernel& k : one.parts[part].kernels)
        if (k.name == "shared_experts") shared.kernels.push_back(k);
      c.shared_fp8_flops_per_seq = effective_flops(shared, lp, Precision::FP8, plan_.hardware) / split;
      c.shared_bf16_flops_per_seq = effective_flops(shared, lp, Precision::BF16, plan_.hardware) / split;
      // Expert TP: a row's FLOPs are split over the expert-TP group (which runs all its rows).
      c.routed_flops_per_row = (effective_flops(per_row.parts[part], lp, Precision::FP8, plan_.hardware) +
                                effective_flops(per_row.parts[part], lp, Precision::BF16, plan_.hardware) * bf16_weight) /
                               double(layout_.etp());
      PartWork column, row, core;
      for (const Kernel& k : one.parts[part].kernels) {
        if (k.cls == KernelClass::Attention) core.kernels.push_back(k);
        const TpGemmShare share = tp_gemm_share(plan_, k.name);
        Kernel piece = k;
        piece.flops = k.flops * share.column;
        if (share.column > 0) column.kernels.push_back(piece);
        piece.flops = k.flops * share.row;
        if (share.row > 0) row.kernels.push_back(piece);
      }
      const auto at_fp8_rate = [&](const PartWork& w) {
        return (effective_flops(w, lp, Precision::FP8, plan_.hardware) +
                effective_flops(w, lp, Precision::BF16, plan_.hardware) * bf16_weight) / split;
      };
      c.column_flops_per_seq = at_fp8_rate(column);
      c.row_flops_per_seq = at_fp8_rate(row);
      c.core_flops_per_seq = at_fp8_rate(core);
    }
  }
  // The LM head is one large GEMM: it gets the large-GEMM efficiency (bf16_gemm_efficiency is
  // measured on the routers' narrow GEMMs, a different shape).
  head_flops_per_seq_[0] = head_flops_per_seq_[1] = head_flops_per_seq_[2] =
      lm_head_work(plan_, 1.0).flops(Precision::BF16) / plan_.hardware.gemm_efficiency / split;
}

// The per-op cost model, once per (layer, part) at the plan's mean microbatch: every GEMM at the
// efficiency of its shape, so per-sequence costs are exact for that microbatch and scale linearly
// for a GPU holding one sequence more or less (uneven batches) or half of it (split lone chunks).
// Stored as FLOPs at the FP8 rate (BF16 for the head), which is how the engine charges time.
void ModelWorkload::predicted_costs() {
  const Plan& plan = plan_;
  const ModelConfig& m = plan.model;
  const double fp8_rate = plan.hardware.fp8_tflops * 1e12, bf16_rate = plan.hardware.bf16_tflops * 1e12;
  const double seqs = plan.sequences_per_microbatch();
  const cost::MicrobatchShape shape = cost::mean_microbatch_shape(plan);
  costs_.resize(size_t(m.num_hidden_layers * kLayerParts));
  for (int64_t l = 0; l < m.num_hidden_layers; ++l) {
    const LayerWork work = layer_work(plan, l, seqs, shape.routed_rows);
    const double rows = work.routed_rows;
    for (int part = 0; part < kLayerParts; ++part) {
      const cost::PartSeconds s = cost::part_seconds(plan, work.parts[part], shape);
      PartCost& c = costs_[size_t(l * kLayerParts + part)];
      c.fp8_flops_per_seq = (s.tokens.gemm + s.tokens.attention) * fp8_rate / seqs;
      c.nonmatmul_s_per_seq = s.tokens.memory / seqs;
      c.routed_flops_per_row = rows > 0 ? (s.routed.gemm + s.routed.attention + s.routed.memory) * fp8_rate / rows : 0.0;
      c.shared_fp8_flops_per_seq = (s.shared.gemm + s.shared.attention + s.shared.memory) * fp8_rate / seqs;
      c.fixed_s = s.all().launch;
      c.shared_fixed_s = s.shared.launch;
      // The GEMMs beside the block's TP collectives (tp_comm_overlap pipelines them with those).
      c.column_flops_per_seq = s.column.gemm * fp8_rate / seqs;
      c.row_flops_per_seq = s.row.gemm * fp8_rate / seqs;
      c.core_flops_per_seq = s.tokens.attention * fp8_rate / seqs;
    }
  }
  const HeadWork head = lm_head_passes(plan, seqs);
  const PartWork* passes[3] = {&head.forward, &head.input_grad, &head.weight_grad};
  for (int i = 0; i < 3; ++i) {
    const cost::ClassSeconds s = cost::part_seconds(plan, *passes[i], shape, cost::OpScope::Head).all();
    head_flops_per_seq_[i] = (s.gemm + s.attention + s.memory) * bf16_rate / seqs;
    head_fixed_s_[i] = s.launch;
  }
}

double ModelWorkload::optimizer_seconds(double held_params, double shard_params) const {
  if (plan_.sim.compute == ComputeModel::SpeedOfLight) return 0;
  return cost::optimizer_seconds(plan_, held_params, shard_params).total();
}

// A straggler only delays its own GPU, so the replicas whose EP groups hold no perturbed GPU run
// exactly the unperturbed step, ahead of or level with the perturbed ones. What couples them --
// the DP collectives -- waits for the later side, which is simulated: its flows to mirrored hosts
// start when it posts them, as they would in a full replay. EP groups and pipeline rows close over
// the same groups on every rank (TP and CP groups are closed over too), so those are replayed whole.
bool ModelWorkload::mark_perturbed_groups() {
  const ScenarioConfig& sc = plan_.scenario;
  if (sc.jitter_sigma > 0 || !loads_.balanced() || !uniform_batch_ || plan_.parallel.zero == 3) return false;
  // Held to the full replay to rounding on a star and on 1:1 fat trees (tests/simulator); on an
  // oversubscribed fat tree the perturbed groups' cross-leaf DP flows came out 1.5-2 % slower than
  // in the full replay, so there every GPU is replayed.
  if (plan_.cluster.topology != Topology::Star && plan_.cluster.oversubscription > 1) return false;
  const PlatformSpec& spec = spec_;
  const std::vector<int64_t> via = nic_detours(spec);
  perturbed_groups_.assign(size_t(layout_.ep_groups()), false);
  const auto mark = [&](int64_t gpu) {
    if (gpu >= 0 && gpu < layout_.gpus()) perturbed_groups_[size_t(layout_.ep_group_index(gpu))] = true;
  };
  const FabricShape shape = spec.shape();
  for (const Straggler& s : sc.stragglers) {
    // A leaf-spine cable lowers the uplink share of every NIC under its leaf (and only theirs: the
    // zone uplinks above never bind), so those GPUs are the perturbed ones.
    if (s.leaf >= 0)
      for (int64_t gpu = 0; gpu < layout_.gpus(); ++gpu)
        if (shape.leaf_of(gpu) == s.leaf) mark(gpu);
    if (s.gpu >= 0) mark(s.gpu);
    if (s.node >= 0)
      for (int64_t l = 0; l < spec.gpus_per_node; ++l) mark(s.node * spec.gpus_per_node + l);
  }
  for (size_t g = 0; g < via.size(); ++g)
    if (via[g] >= 0) mark(int64_t(g)), mark(via[g]);  // the lending GPU's NIC carries the detour
  for (bool grew = true; grew;) {  // a TP or CP group spanning two EP groups takes both
    grew = false;
    for (int64_t gpu = 0; gpu < layout_.stage_gpus(); ++gpu) {
      if (!perturbed_groups_[size_t(layout_.ep_group_index(gpu))]) continue;
      for (const auto& group : {layout_.tp_group(gpu), layout_.cp_group(gpu)})
        for (const int64_t peer : group)
          if (!perturbed_groups_[size_t(layout_.ep_group_index(peer))]) perturbed_groups_[size_t(layout_.ep_group_index(peer))] = grew = true;
    }
  }
  perturbed_group_count_ = std::count(perturbed_groups_.begin(), perturbed_groups_.end(), true);
  if (perturbed_group_count_ > 0 && perturbed_group_count_ < layout_.ep_groups()) return true;
  perturbed_groups_.clear();
  return false;
}

int64_t ModelWorkload::group_block() const {
  return std::lcm(layout_.ep_group_span(), layout_.tp() * layout_.cp());
}

std::vector<sched::ChunkOp> ModelWorkload::rank_program(int64_t rank) const {
  std::vector<sched::ChunkOp> ops = schedule_->program(rank);
  if (plan_.parallel.moe_overlap_ep_comm) return sched::pair_backward_with_next_forward(ops);
  return ops;
}

std::string ModelWorkload::name() const { return plan_.model.name; }

PlatformSpec ModelWorkload::platform() const { return spec_; }

int ModelWorkload::num_streams() const {
  return streams_.count;
}

double ModelWorkload::bf16_flops() const { return plan_.hardware.bf16_tflops * 1e12; }

std::unique_ptr<ops::GpuProgram> ModelWorkload::program(int64_t gpu) const {
  return std::make_unique<ModelGpuProgram>(*this, gpu);
}

bool ModelWorkload::simulated(int64_t gpu) const {
  if (!reduced_) return true;
  // One EP group (FSDP: it holds both batch sizes; uneven loads: every group runs the same loads),
  // widened to whole TP x CP groups.
  if (plan_.parallel.zero == 3 || ep_group_reduced_) return gpu % layout_.stage_gpus() < group_block();
  if (!perturbed_groups_.empty()) return perturbed_groups_[size_t(layout_.ep_group_index(gpu))];
  return layout_.dp_rank(gpu) == 0;  // replica 0 of every stage
}

std::string ModelWorkload::mode() const {
  if (!reduced_) return full_reason_.empty() ? "full" : "full: " + full_reason_;
  if (!perturbed_groups_.empty())
    return fmt::format("straggler-groups: the {} EP group(s) per pipeline rank holding a straggler ({} of {} GPUs) "
                       "simulated; the other {} groups per rank are unperturbed, run ahead or level, and mirror "
                       "them (DP flows to them run against their hosts)",
                       perturbed_group_count_, perturbed_group_count_ * layout_.ep() * layout_.pp(),
                       layout_.gpus(), layout_.ep_groups() - perturbed_group_count_);
  if (ep_group_reduced_)
    return fmt::format("ep-groups: EP group 0 of every pipeline rank ({} x {} GPUs) simulated, since uneven expert "
                       "loads make the GPUs of a group differ; the other {} groups per rank run the same loads and "
                       "mirror it (DP flows to them run against their hosts)",
                       group_block(), layout_.pp(), layout_.stage_gpus() / group_block() - 1);
  if (plan_.parallel.zero == 3)
    return fmt::format("ep-group: EP group 0 ({} GPUs) simulated; the other {} groups mirror it (flows to them run "
                       "against their hosts)",
                       group_block(), plan_.gpus() / group_block() - 1);
  const int64_t per_rank = layout_.tp() * layout_.cp();
  return fmt::format("reduced: data-parallel replica 0 ({} GPUs, {} per pipeline rank) simulated; the other {} "
                     "replicas mirror it (EP and DP flows to them run against their hosts)",
                     layout_.pp() * per_rank, per_rank == 1 ? std::string("one") : std::to_string(per_rank),
                     plan_.dp() - 1);
}

std::string ModelWorkload::fidelity() const {
  if (fold_hidden_nvlink_)
    return "fast: the NVLink leg of every all-to-all whose IB leg outlasts it is left out (every GPU of a group "
           "runs in lock step and nothing else uses NVLink, so it never sets a time; sim.fidelity=exact replays it)";
  if (plan_.sim.fidelity == SimFidelity::Exact) return "exact: every flow replayed (sim.fidelity=exact)";
  return "exact: every flow replayed (sim.fidelity=fast leaves NVLink legs out only when every GPU of a group "
         "runs in lock step, with balanced loads, nothing perturbed and NVLink carrying nothing else)";
}

bool ModelWorkload::layer_is_moe(int64_t layer) const {
  return plan_.model.is_moe_layer(layer);
}

double ModelWorkload::layer_non_expert_params(int64_t layer) const {
  return layer_held_params(plan_, params_, layer).non_expert;
}

double ModelWorkload::layer_expert_params_per_gpu(int64_t layer) const {
  return layer_held_params(plan_, params_, layer).expert;
}

double ModelWorkload::stage_non_expert_params(int64_t stage) const {
  return stage_held_params(plan_, params_, stages_[size_t(stage)], stage == 0).non_expert;
}

double ModelWorkload::stage_expert_params_per_gpu(int64_t stage) const {
  return stage_held_params(plan_, params_, stages_[size_t(stage)], stage == 0).expert;
}

double ModelWorkload::sequences(int64_t gpu, int64_t mb) const {
  if (uniform_batch_) return uniform_sequences_;  // asked for by every op: skip the divisions
  return double(microbatch_sequences(plan_, layout_.dp_rank(gpu), mb));
}

double ModelWorkload::ep_group_mean_sequences(int64_t gpu, int64_t mb) const {
  if (uniform_batch_) return sequences(gpu, mb);
  const int64_t group = layout_.ep_group_index(gpu);
  return group_mean_sequences_[size_t(group * plan_.parallel.microbatches + mb)];
}

}  // namespace stepsim

namespace stepsim {

double ModelWorkload::routed_rows(int64_t gpu, int64_t layer, int64_t mb) const {
  // Expert TP: the GPU runs the rows of its whole expert-TP group (on its slice of the matrices).
  const double per_gpu = ep_group_mean_sequences(gpu, mb) * double(plan_.train.seq_len) * token_share() *
                         double(plan_.model.num_experts_per_tok) * double(layout_.etp());
  if (!layer_is_moe(layer)) return per_gpu;
  if (loads_.balanced()) return per_gpu * balanced_kept_rows(plan_);
  const int64_t slot = layout_.ep_slot(gpu);
  return per_gpu * double(layout_.ep()) * loads_.slot_share(layer, mb, slot);
}

AllToAll ModelWorkload::ep_flows(int64_t gpu, int64_t layer, int64_t mb, double scale, bool to_experts,
                                 double bytes_per_copy) const {
  const double tokens_per_seq = double(plan_.train.seq_len) * scale * token_share();
  const auto tokens_of = [&](int64_t g) { return sequences(g, mb) * tokens_per_seq; };
  if (plan_.parallel.moe_dispatcher == MoeDispatcher::AllGather)  // a ring already; loads do not change it
    return all_gather_dispatch(plan_, gpu, tokens_of, bytes_per_copy);
  if (loads_.balanced()) {
    // Rows an expert drops are not sent, padded ones are (DeepEP's dedup copies are left as they are).
    const double kept = plan_.parallel.moe_dispatcher == MoeDispatcher::AllToAll ? balanced_kept_rows(plan_) : 1.0;
    AllToAll per_peer = dispatcher_flows(plan_, ep_layout_, routing_, gpu, tokens_of, bytes_per_copy * kept, nullptr);
    if (plan_.parallel.moe_dispatcher == MoeDispatcher::AllToAll) per_peer = rail_gathered(plan_, per_peer, gpu);
    const AllToAll ring = ring_equivalent(plan_, per_peer, gpu);
    return fold_hidden_nvlink_ ? without_hidden_nvlink(spec_, ring, gpu) : ring;
  }
  const AllToAll a =
      dispatcher_flows(plan_, ep_layout_, routing_, gpu, tokens_of, bytes_per_copy, loads_.slot_shares(layer, mb));
  return to_experts ? a : reversed(a);
}

}  // namespace stepsim
