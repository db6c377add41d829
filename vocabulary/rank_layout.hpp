// Where every GPU sits in the parallelism plan, and the groups it talks to, as lists of GPU ids
// (ASTRA-sim's communicator groups). Megatron's order, tensor-parallel fastest:
//   gpu = pp * stage_gpus + (dp * cp + cp_rank) * tp + tp_rank,   stage_gpus = dp * cp * tp,
// so a TP group is tp consecutive GPUs (inside a node when tp divides it) and a pipeline stage is
// a block of consecutive GPUs. Experts sit on their own grid over the same GPUs, Megatron-Core's
// (since v0.10, "MoE parallel folding"; torchtitan's is the same), expert TP fastest:
//   gpu % stage_gpus = (edp * ep + ep_rank) * etp + etp_rank,
// so an expert-TP group is etp consecutive GPUs, an EP group ep GPUs etp apart (ep consecutive
// GPUs with expert TP 1, the default, composing with TP and CP), and the copies of one expert
// shard, ep x etp apart, its expert-data-parallel group. Nobody else divides GPU ids.
#pragma once

#include <cstdint>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

struct RankCoords {
  int64_t pp = 0;        // pipeline rank
  int64_t dp = 0;        // data-parallel replica
  int64_t cp = 0;        // context-parallel rank inside the replica
  int64_t tp = 0;        // tensor-parallel rank
  int64_t ep = 0;        // position inside its EP group
  int64_t expert_dp = 0; // which copy of its expert shard (its expert-data-parallel rank)
};

class RankLayout {
 public:
  explicit RankLayout(const Plan& plan);

  int64_t gpus() const { return gpus_; }
  int64_t gpus_per_node() const { return gpus_per_node_; }
  int64_t pp() const { return pp_; }
  int64_t dp() const { return dp_; }
  int64_t cp() const { return cp_; }
  int64_t tp() const { return tp_; }
  int64_t ep() const { return ep_; }
  int64_t etp() const { return etp_; }  // expert tensor parallelism
  // Copies of one expert shard in a stage (its expert-data-parallel group's size).
  int64_t expert_dp() const { return stage_gpus_ / (ep_ * etp_); }
  int64_t ep_groups() const { return stage_gpus_ / ep_; }  // EP groups of a stage
  int64_t stage_gpus() const { return stage_gpus_; }  // GPUs of one pipeline rank: dp x cp x tp
  // GPUs one replica's tokens are split over between blocks: sequence parallelism shards them over
  // TP, context parallelism over CP; token_share() is one GPU's part, 1 / (tp x cp).
  int64_t token_split() const { return tp_ * cp_; }
  double token_share() const { return 1.0 / double(tp_ * cp_); }
  // GPUs holding the same (non-expert) weights: the replicas x CP ranks of one TP rank.
  int64_t grad_group_size() const { return dp_ * cp_; }

  RankCoords coords(int64_t gpu) const;
  int64_t gpu(int64_t pp, int64_t dp, int64_t cp = 0, int64_t tp = 0) const;
  int64_t pipeline_rank(int64_t gpu) const { return gpu / stage_gpus_; }
  int64_t dp_rank(int64_t gpu) const { return gpu % stage_gpus_ / (cp_ * tp_); }
  int64_t ep_slot(int64_t gpu) const { return gpu % stage_gpus_ / etp_ % ep_; }  // its rank in its EP group
  // Which EP group of its stage (0 .. ep_groups() - 1): (edp, etp rank).
  int64_t ep_group_index(int64_t gpu) const {
    const int64_t local = gpu % stage_gpus_;
    return local / (ep_ * etp_) * etp_ + local % etp_;
  }
  int64_t first_of_ep_group(int64_t gpu) const { return gpu - ep_slot(gpu) * etp_; }  // the group's lowest GPU id
  int64_t ep_group_span() const { return ep_ * etp_; }  // consecutive GPUs one EP group's members lie among
  // The GPU with the same coordinates on pipeline rank `rank` (its pipeline peer).
  int64_t on_pipeline_rank(int64_t gpu, int64_t rank) const { return rank * stage_gpus_ + gpu % stage_gpus_; }
  int64_t first_gpu_of_rank(int64_t rank) const { return rank * stage_gpus_; }

  // Groups containing `gpu`, in increasing GPU order.
  std::vector<int64_t> tp_group(int64_t gpu) const;
  std::vector<int64_t> cp_group(int64_t gpu) const;
  std::vector<int64_t> dp_group(int64_t gpu) const;        // same pp, cp, tp: the replicas
  std::vector<int64_t> grad_group(int64_t gpu) const;      // same pp, tp: replicas x CP ranks hold the same weights
  std::vector<int64_t> pp_group(int64_t gpu) const;        // same coordinates on every pipeline rank
  std::vector<int64_t> ep_group(int64_t gpu) const;
  std::vector<int64_t> expert_dp_group(int64_t gpu) const; // the copies of its expert shard in the stage
  std::vector<int64_t> etp_group(int64_t gpu) const;       // the GPUs splitting its experts' matrices
  // HSDP (parallel.fsdp_shard_size = s > 0): the grad group cut into blocks of s consecutive
  // members (one block spans s x tp GPUs); experts likewise, s x tp / ep expert replicas a block.
  // `shard`: the block holding `gpu`; `replicas`: the members at its position in every block.
  std::vector<int64_t> shard_group(int64_t gpu) const;
  std::vector<int64_t> shard_replicas(int64_t gpu) const;
  std::vector<int64_t> expert_shard_group(int64_t gpu) const;
  std::vector<int64_t> expert_shard_replicas(int64_t gpu) const;

 private:
  static std::vector<int64_t> block_of(const std::vector<int64_t>& group, int64_t gpu, int64_t size);
  static std::vector<int64_t> across_blocks(const std::vector<int64_t>& group, int64_t gpu, int64_t size);
  std::vector<int64_t> strided(int64_t first, int64_t count, int64_t stride) const;

  int64_t shard_ = 0;  // fsdp_shard_size (0 = whole group)
  int64_t gpus_ = 1, gpus_per_node_ = 1, pp_ = 1, dp_ = 1, cp_ = 1, tp_ = 1, ep_ = 1, etp_ = 1, stage_gpus_ = 1;
};

}  // namespace stepsim
