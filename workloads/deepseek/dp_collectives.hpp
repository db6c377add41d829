// The flows of one data-parallel collective (all-gather or reduce-scatter) seen from one GPU,
// as bulk ring flows: the ring's N-1 steps move (N-1)/N of the data over each edge, so one flow
// per edge carries the same bytes and gives the same bandwidth time with far fewer activities.
// Non-expert parameters go hierarchically (an IB ring among the nodes, over the 1/G slice with
// the GPU's local rank, and an NVLink ring inside the node); routed experts, whose replicas sit on
// other nodes, ring over IB only.
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/config/plan.hpp"
#include "workloads/deepseek/ep_traffic.hpp"

namespace stepsim {

struct DpGroup {
  int64_t first_gpu = 0;  // the group is dp consecutive GPUs (one pipeline stage, or all for FSDP)
  int64_t size = 1;
};

struct RingFlows {
  std::vector<PeerFlow> out;  // to the ring successors
  std::vector<PeerFlow> in;   // from the ring predecessors (same bytes by symmetry)
};

RingFlows dp_ring_flows(const Plan& plan, const DpGroup& group, int64_t gpu, double non_expert_params,
                        double expert_params, double bytes_per_param);

}  // namespace stepsim
