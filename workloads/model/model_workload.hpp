// The model workload: turns a Plan (DeepSeek-V3 or any HF-style dense / MoE model) and its
// schedule into each GPU's stream ops: per layer the attention and MLP GEMMs with their FLOPs and
// precision, MoE dispatch and combine as real transfers over the EP group, pipeline sends of the
// residual stream, and the data-parallel collectives (ZeRO-1 at the end of the step, or FSDP's
// per-layer all-gathers and reduce-scatters).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "schedules/schedule.hpp"
#include "vocabulary/plan.hpp"
#include "vocabulary/workload.hpp"
#include "workloads/traffic/ep_traffic.hpp"
#include "workloads/layers/layer_partition.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/model/model_memory.hpp"
#include "workloads/model/model_streams.hpp"
#include "vocabulary/rank_layout.hpp"
#include "vocabulary/model_params.hpp"
#include "workloads/routing/expert_loads.hpp"
#include "workloads/routing/routing_stats.hpp"

namespace stepsim {

// Per-sequence costs of one layer part, so any microbatch size scales them linearly.
struct PartCost {
  double fp8_flops_per_seq = 0;
  double bf16_flops_per_seq = 0;
  double nonmatmul_s_per_seq = 0;
  double routed_flops_per_row = 0;  // routed-expert GEMMs (MLP parts of MoE layers)
  // The shared experts' part of the two per-sequence FLOP counts (MLP parts of MoE layers).
  double shared_fp8_flops_per_seq = 0;
  double shared_bf16_flops_per_seq = 0;
  // The GEMMs beside the block's TP collectives (model_parallel_comm.hpp, tp_gemm_share), in FLOPs
  // at the FP8 rate as the engine charges them: the column-parallel ones the all-gather feeds and
  // the row-parallel one whose output is reduce-scattered (in B parts: their input gradients).
  double column_flops_per_seq = 0;
  double row_flops_per_seq = 0;
  // The attention core's kernels (attention parts), at the FP8 rate: what context parallelism's
  // exchanges run beside or around (model_parallel_comm.hpp).
  double core_flops_per_seq = 0;
  // Per op, whatever its size (sim.compute: predicted): kernel launches, all and the shared experts'.
  double fixed_s = 0;
  double shared_fixed_s = 0;
};

class ModelWorkload : public ops::Workload {
 public:
  explicit ModelWorkload(const Plan& plan);
  ~ModelWorkload() override;

  std::string name() const override;
  PlatformSpec platform() const;  // the cluster the GPU ids refer to
  double bf16_flops() const override;
  int num_streams() const override;
  std::unique_ptr<ops::GpuProgram> program(int64_t gpu) const override;
  std::string mode() const override;
  std::string fidelity() const override;
  bool local_deps_only() const override { return true; }  // a GPU's ops wait only on its own streams
  bool simulated(int64_t gpu) const override;
  const ops::MemoryModel* memory_model() const override { return memory_.get(); }
  const ModelMemory& memory() const { return *memory_; }
  // Every GPU runs every microbatch on the same number of sequences.
  bool uniform_batch() const { return uniform_batch_; }

  // Shared, read-only data the per-GPU programs use.
  const Plan& plan() const { return plan_; }
  const RankLayout& layout() const { return layout_; }
  const sched::Schedule& schedule() const { return *schedule_; }
  // Rank `rank`'s chunk ops as the workload runs them: the schedule's, with each steady-state
  // backward paired with the next forward under parallel.moe_overlap_ep_comm.
  std::vector<sched::ChunkOp> rank_program(int64_t rank) const;
  const ModelStreams& streams() const { return streams_; }  // every GPU's streams and transfer channels
  const std::vector<StageLayers>& stages() const { return stages_; }
  const EpLayout& ep_layout() const { return ep_layout_; }
  const ModelParams& params() const { return params_; }
  const PartCost& cost(int64_t layer, LayerPart part) const { return costs_[size_t(layer * kLayerParts + int(part))]; }
  // The LM head's pass (forward, input gradient, weight gradient: equal at speed of light) in FLOPs at
  // the BF16 rate per sequence, and its per-op launch seconds.
  double head_flops_per_seq(ops::Phase phase) const { return head_flops_per_seq_[head_index(phase)]; }
  double head_fixed_s(ops::Phase phase) const { return head_fixed_s_[head_index(phase)]; }
  // sim.compute: predicted: the optimizer step's seconds on a GPU holding these parameters, of
  // which these are its shard (0 at speed of light: the roofline has no optimizer term).
  double optimizer_seconds(double held_params, double shard_params) const;
  bool layer_is_moe(int64_t layer) const;
  // Share of its replica's microbatch tokens one GPU holds between blocks: 1 / (tp x cp) (sequence
  // parallelism shards them over TP, context parallelism over CP).
  double token_share() const { return layout_.token_share(); }
  // Parameters of one stage held by each GPU (TP shards applied, experts divided over the EP group).
  double stage_non_expert_params(int64_t stage) const;
  double stage_expert_params_per_gpu(int64_t stage) const;
  double layer_non_expert_params(int64_t layer) const;
  double layer_expert_params_per_gpu(int64_t layer) const;
  // Sequences GPU `gpu` runs in microbatch `mb`, and the mean over its EP group.
  double sequences(int64_t gpu, int64_t mb) const;
  double ep_group_mean_sequences(int64_t gpu, int64_t mb) const;
  // Routed-expert rows GPU `gpu` computes in layer `layer` of microbatch `mb`: its experts' share
  // of the EP group's k rows per token (the mean share while loads are balanced).
  double routed_rows(int64_t gpu, int64_t layer, int64_t mb) const;
  // One all-to-all of GPU `gpu`: towards the experts (dispatch, combine's gradient) or back.
  // `scale` is the share of the microbatch it carries. Balanced loads: ring-equivalent flows, the
  // same for every layer; uneven loads: one flow per peer, sized by the layer's loads.
  AllToAll ep_flows(int64_t gpu, int64_t layer, int64_t mb, double scale, bool to_experts, double bytes_per_copy) const;
  const ExpertLoads& loads() const { return loads_; }
  const RoutingStats& routing() const { return routing_; }

 private:
  // GPUs at the start of a stage that reduced FSDP / uneven-load replays simulate: one EP group,
  // widened to whole TP x CP groups.
  int64_t group_block() const;

  Plan plan_;
  RankLayout layout_;
  std::unique_ptr<sched::Schedule> schedule_;
  ModelStreams streams_;
  std::vector<StageLayers> stages_;
  RoutingStats routing_;
  EpLayout ep_layout_;
  ExpertLoads loads_;
  ModelParams params_;
  PlatformSpec spec_;  // the cluster SimGrid builds: platform(), the NVLink fold, straggler groups
  std::vector<PartCost> costs_;
  static int head_index(ops::Phase phase) {
    return phase == ops::Phase::Backward ? 1 : phase == ops::Phase::Weight ? 2 : 0;
  }
  double head_flops_per_seq_[3] = {};
  double head_fixed_s_[3] = {};
  void speed_of_light_costs();  // sim.compute: speed-of-light: FLOPs at the stated rates and profile
  void predicted_costs();  // sim.compute: predicted: costs_ and the head's from workloads/cost
  bool uniform_batch_ = true;
  double uniform_sequences_ = 0;  // sequences of every microbatch on every GPU, when uniform_batch_
  std::vector<double> group_mean_sequences_;  // [EP group * microbatches + mb], uneven batches only
  std::unique_ptr<ModelMemory> memory_;  // built last: it reads the members above
  bool reduced_ = false;  // one data-parallel replica (PP plans) or one EP group (FSDP) stands for all
  bool ep_group_reduced_ = false;  // uneven loads, PP plans: EP group 0 of every rank stands for the others
  std::string full_reason_;        // why an `auto` run with uneven loads replays every GPU
  // Stragglers, PP plans: only the EP groups holding a perturbed GPU, with their pipeline rows
  // (the same groups on every pipeline rank), are replayed; the unperturbed groups mirror them.
  bool mark_perturbed_groups();  // fills the two below; false when the replicas cannot be split so
  std::vector<bool> perturbed_groups_;  // by EP group index within a pipeline rank; empty: not in use
  int64_t perturbed_group_count_ = 0;
  // sim.fidelity=fast on a lock-step replay: all-to-alls leave out NVLink legs that cannot bind.
  bool lock_step_nvlink_idle() const;
  bool fold_hidden_nvlink_ = false;
};

}  // namespace stepsim
