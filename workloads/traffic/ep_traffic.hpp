// The flows of one MoE all-to-all (dispatch or combine) seen from one GPU, DeepEP style: a token
// crosses InfiniBand once per remote node it needs (node dedup, to the GPU with the same local
// rank), then NVLink carries it to the GPUs of that node that host its experts.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "platforms/cluster_platform.hpp"

#include "vocabulary/plan.hpp"
#include "workloads/routing/routing_stats.hpp"

namespace stepsim {

struct PeerFlow {
  int64_t peer = 0;  // global GPU id
  double bytes = 0;
};

// Flows are expected values under routing that treats every node and GPU of the group alike
// (balanced, or DeepSeek's routing with independent scores). Forwarding over NVLink is pipelined
// with the IB transfers, as DeepEP does, so all flows of one all-to-all run at once.
struct AllToAll {
  std::vector<PeerFlow> out;  // IB to the same local rank of other nodes, NVLink to local GPUs
  std::vector<PeerFlow> in;   // what the peers send here
};

struct EpLayout {
  int64_t ep_nodes = 1;          // nodes an EP group spans
  double node_touch_prob = 0;    // chance a token needs a given node of its group
  double gpus_per_touched_node = 0;  // distinct GPUs a token needs on a node it touches
  double gpu_touch_prob = 0;     // EP inside one node: chance a token needs a given GPU
};

EpLayout ep_layout(const Plan& plan, const RoutingStats& routing);

// `tokens_of(gpu)`: tokens of that GPU's current microbatch; each copy weighs `bytes_per_copy`
// (FP8 + scales for dispatch and combine's gradient, BF16 for combine and dispatch's gradient).
using TokensOf = std::function<double(int64_t gpu)>;
AllToAll ep_all_to_all(const Plan& plan, const EpLayout& layout, int64_t gpu, const TokensOf& tokens_of,
                       double bytes_per_copy);

// The to-experts all-to-all (dispatch, and combine's gradient) under uneven expert loads:
// `slot_share[j]` is the share of the group's routed rows the j-th GPU of the EP group receives.
// A token needs node n with probability min(1, mean_nodes x the node's share) (touches follow the
// load; each touched node still gets k / mean_nodes of its experts on average), and a GPU of a
// node it touches with probability 1 - (1 - its share of the node)^(experts per touched node).
// With every share 1 / ep this is ep_all_to_all exactly. One flow per peer: under uneven loads no
// ring carries the same bytes on every port.
AllToAll ep_all_to_all_loaded(const Plan& plan, const RoutingStats& routing, int64_t gpu, const TokensOf& tokens_of,
                              double bytes_per_copy, const double* slot_share);

// Megatron's alltoall dispatcher (and torchtitan's): every token-expert row whose expert another GPU
// of the group holds is one copy, sent straight to that GPU (no node dedup, no forwarding): to GPU
// j, tokens x k x share_j, where share_j is the share of the group's routed rows j's experts take
// (`slot_share`, in EP-group order; null = balanced, 1 / ep each).
AllToAll per_expert_all_to_all(const Plan& plan, int64_t gpu, const TokensOf& tokens_of, double bytes_per_copy,
                               const double* slot_share = nullptr);

// Megatron's allgather dispatcher: every member gathers the tokens of its whole EP group (and
// reduce-scatters the experts' outputs back, the same bytes), as a hierarchical ring over the
// group (dp_collectives.hpp): an IB ring among the domains, an NVLink ring inside each.
AllToAll all_gather_dispatch(const Plan& plan, int64_t gpu, const TokensOf& tokens_of, double bytes_per_copy);

// `per_peer` (per_expert_all_to_all's flows under balanced loads) with its IB bytes gathered per
// remote NVLink domain onto the GPU of this GPU's local rank there (its rail peer), as DeepEP's IB
// flows go. Every NIC sends and receives the same bytes as before when the group's domains hold
// alike loads, and every member then sees the same peers of each kind, which ring_equivalent needs
// to pair senders with receivers.
AllToAll rail_gathered(const Plan& plan, const AllToAll& per_peer, int64_t gpu);

// The flows of one expert all-to-all of `gpu` under the plan's dispatcher: DeepEP's (ep_all_to_all,
// or ep_all_to_all_loaded under uneven loads), per_expert_all_to_all or all_gather_dispatch.
// `slot_share` null = balanced loads. The to-experts direction; the other is reversed().
AllToAll dispatcher_flows(const Plan& plan, const EpLayout& layout, const RoutingStats& routing, int64_t gpu,
                          const TokensOf& tokens_of, double bytes_per_copy, const double* slot_share);

// The from-experts direction (combine, and dispatch's gradient) retraces the to-experts flows
// backwards: what a GPU received it now sends.
AllToAll reversed(const AllToAll& a);

// The same all-to-all as ring-equivalent flows: one IB flow carrying everything this GPU sends to
// other nodes, to the same local rank on the next node of the group (and one in from the previous
// node), and one NVLink flow to the next local GPU. Every NIC and NVLink port carries the same bytes
// as with one flow per peer, so when all GPUs of the group load their links alike (balanced routing)
// the max-min transfer times are the same, with 2 flows per GPU instead of 2 (nodes + GPUs - 2).
AllToAll ring_equivalent(const Plan& plan, const AllToAll& per_peer, int64_t gpu);

// `ring` (ring_equivalent's flows) without its NVLink flows when they cannot end after its IB
// flows: each direction's NVLink bytes take no longer over an idle NVLink port than the IB bytes
// over an idle NIC (a lower bound on the IB flows' time). In a lock-step replay (every GPU of the
// group posts together, nothing else on NVLink) the op then ends with its IB flows either way, so
// the result is the same with one flow fewer per GPU (sim.fidelity=fast). Otherwise `ring` as is.
AllToAll without_hidden_nvlink(const PlatformSpec& spec, const AllToAll& ring, int64_t gpu);

// Dispatch copies carry FP8 activations with one FP32 scale per 128 channels (DeepEP in an FP8
// plan, as DeepSeek-V3 dispatches); Megatron's alltoall and allgather dispatchers move BF16 hidden
// states (their FP8 casts sit inside the expert GEMMs). Combine copies are BF16.
double dispatch_bytes_per_token(const Plan& plan);
double combine_bytes_per_token(const ModelConfig& m);

}  // namespace stepsim
