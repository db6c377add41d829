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

}  // namespace stepsim
