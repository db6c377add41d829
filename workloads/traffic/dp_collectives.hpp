// The flows of one data-parallel collective (all-gather or reduce-scatter) seen from one GPU,
// as bulk ring flows: the ring's N-1 steps move (N-1)/N of the data over each edge, so one flow
// per edge carries the same bytes and gives the same bandwidth time with far fewer activities.
// Non-expert parameters go hierarchically over the group's GPUs (an IB ring among the nodes, over
// the slice of the GPU's position inside its node, and an NVLink ring among the members inside the
// node); routed experts ring once over their expert-data-parallel group. Groups come from the
// rank layout as lists of GPU ids.
#pragma once

#include <cstdint>
#include <vector>

#include "vocabulary/plan.hpp"
#include "workloads/traffic/ep_traffic.hpp"

namespace stepsim {

struct DpGroup {
  std::vector<int64_t> members;         // GPUs sharing the non-expert parameters (increasing ids)
  std::vector<int64_t> expert_members;  // GPUs sharing this GPU's experts (increasing ids)
};

struct RingFlows {
  std::vector<PeerFlow> out;  // to the ring successors
  std::vector<PeerFlow> in;   // from the ring predecessors (same bytes by symmetry)
};

RingFlows dp_ring_flows(const Plan& plan, const DpGroup& group, int64_t gpu, double non_expert_params,
                        double expert_params, double bytes_per_param);

// Megatron's data-parallel buckets (parallel.overlap_grad_reduce, overlap_param_gather). A chunk's
// parameters are laid out in backward order (the LM head first, the embedding last) and cut every
// `bucket_params` parameters (Megatron-Core's ParamAndGradBuffer, counting one GPU's shard of TP and
// EP); non-expert and expert parameters share the cuts (Megatron keeps them in two buffers, each cut
// the same way). A bucket's gradients are final once the backward has passed the item holding its
// last parameter; the forward needs it before the first item holding any of its parameters.
struct DpBucket {
  double non_expert = 0, expert = 0;
  double gathered_non_expert_bytes = 0, gathered_expert_bytes = 0;  // their parameter all-gather's bytes
  size_t last_item = 0;  // position, in backward order, of the item whose gradients complete it
};
struct DpBuckets {
  std::vector<DpBucket> buckets;        // in backward order: reduce-scatter order
  std::vector<size_t> needed_by_item;   // per item in backward order: the bucket whose all-gather
                                        // completes its parameters (gathers run last bucket first:
                                        // the first bucket the item touches in backward order)
};
// `items`: (non-expert, expert) parameters per GPU of each item, in backward order; `gathered`:
// their bytes in the parameter all-gather, per item (BF16's 2 per parameter when not given). A
// bucket that cuts an item takes its share of both.
DpBuckets dp_buckets(const std::vector<std::pair<double, double>>& items, double bucket_params,
                     const std::vector<std::pair<double, double>>& gathered = {});

// Parameters per bucket: parallel.ddp_bucket_size, or Megatron-Core's default max(40M, 1M x DP size)
// (DistributedDataParallel, r0.8 and later), DP size = the data-parallel replicas; never less than
// the smallest weight tensor a GPU holds (dp_smallest_tensor_params).
double ddp_bucket_params(const Plan& plan);

// Megatron closes a bucket only at the end of a parameter tensor, never inside one
// (param_and_grad_buffer.py: a bucket ends once it holds bucket_size or more), so no bucket holds
// less than one tensor: a bucket size below the smallest weight tensor makes a bucket per tensor, not
// per parameter. The smallest matrix one GPU holds of a layer (norm weights and biases, fused into
// those layers' modules, left aside): an attention projection (standard attention's Q, K and V
// fused into one, MLA's each its own), the MLP's down projection, split over TP; a router, a
// shared expert's or a routed expert's down projection (TP 1). It bounds the
// buckets of a chunk by its parameters over that size (parallel.ddp_bucket_size=1 made one bucket,
// hence two ops, per parameter).
double dp_smallest_tensor_params(const Plan& plan);

}  // namespace stepsim
