#include "workloads/traffic/ep_traffic.hpp"

#include <algorithm>
#include <cmath>

#include "platforms/topology.hpp"
#include "vocabulary/rank_layout.hpp"
#include "workloads/traffic/dp_collectives.hpp"

namespace stepsim {

double dispatch_bytes_per_token(const Plan& plan) {
  const double h = double(plan.model.hidden_size);
  // FP8 with one FP32 scale per 1x128 tile (DeepSeek-V3 report 3.3.3), or BF16.
  return plan.parallel.moe_fp8_dispatch ? h * 1.0 + h / 128.0 * 4.0 : h * 2.0;
}

double combine_bytes_per_token(const ModelConfig& m) { return double(m.hidden_size) * 2.0; }

EpLayout ep_layout(const Plan& plan, const RoutingStats& routing) {
  EpLayout l;
  const ModelConfig& m = plan.model;
  // "Node" here is an NVLink domain: a token crosses IB once per remote domain (Plan::nvlink_ranks).
  const int64_t g = plan.nvlink_ranks(), ep = RankLayout(plan).ep();
  l.ep_nodes = std::max<int64_t>(1, ep / g);
  if (!m.is_moe()) return l;
  // A GPU holding x of a token's experts: distinct GPUs among G when x experts land uniformly.
  const auto distinct = [](double gpus, double experts) { return gpus * (1.0 - std::pow(1.0 - 1.0 / gpus, experts)); };
  if (l.ep_nodes > 1) {
    l.node_touch_prob = routing.mean_nodes / double(l.ep_nodes);
    const double experts_per_touched_node = double(m.num_experts_per_tok) / routing.mean_nodes;
    l.gpus_per_touched_node = distinct(double(g), experts_per_touched_node);
  } else {
    l.node_touch_prob = 1.0;
    l.gpu_touch_prob = distinct(double(ep), double(m.num_experts_per_tok)) / double(ep);
  }
  return l;
}

AllToAll ep_all_to_all(const Plan& plan, const EpLayout& l, int64_t gpu, const TokensOf& tokens_of,
                       double bytes_per_copy) {
  AllToAll a;
  const RankLayout layout(plan);
  if (!plan.model.is_moe() || layout.ep() == 1) return a;
  const int64_t g = plan.nvlink_ranks();
  const int64_t node = gpu / g, local = gpu % g;
  if (l.ep_nodes == 1) {
    // The whole group is inside the node: every copy goes straight over NVLink.
    const int64_t first = layout.first_of_ep_group(gpu);
    for (int64_t peer = first; peer < first + layout.ep(); ++peer) {
      if (peer == gpu) continue;
      a.out.push_back({peer, tokens_of(gpu) * l.gpu_touch_prob * bytes_per_copy});
      a.in.push_back({peer, tokens_of(peer) * l.gpu_touch_prob * bytes_per_copy});
    }
    return a;
  }
  const int64_t first_node = node / l.ep_nodes * l.ep_nodes;
  // Copies that reach rail `rail` of this node: one per token of each group node's GPU on that
  // rail that needs this node. They go on to the local GPUs hosting one of their experts.
  const auto arriving = [&](int64_t rail) {
    double sum = 0;
    for (int64_t n = first_node; n < first_node + l.ep_nodes; ++n) sum += tokens_of(n * g + rail);
    return sum * l.node_touch_prob;
  };
  const double nvlink_share = l.gpus_per_touched_node / double(g);
  for (int64_t n = first_node; n < first_node + l.ep_nodes; ++n) {
    if (n == node) continue;
    const int64_t peer = n * g + local;
    a.out.push_back({peer, tokens_of(gpu) * l.node_touch_prob * bytes_per_copy});
    a.in.push_back({peer, tokens_of(peer) * l.node_touch_prob * bytes_per_copy});
  }
  const double forwarded_out = arriving(local) * nvlink_share * bytes_per_copy;
  for (int64_t peer = node * g; peer < (node + 1) * g; ++peer) {
    if (peer == gpu) continue;
    a.out.push_back({peer, forwarded_out});
    a.in.push_back({peer, arriving(peer % g) * nvlink_share * bytes_per_copy});
  }
  return a;
}

AllToAll ep_all_to_all_loaded(const Plan& plan, const RoutingStats& routing, int64_t gpu, const TokensOf& tokens_of,
                              double bytes_per_copy, const double* share) {
  AllToAll a;
  const ModelConfig& m = plan.model;
  const RankLayout layout(plan);
  if (!m.is_moe() || layout.ep() == 1) return a;
  const int64_t g = plan.nvlink_ranks(), ep = layout.ep();
  const int64_t first = layout.first_of_ep_group(gpu), slot = gpu - first;
  const double k = double(m.num_experts_per_tok);
  if (ep <= g) {
    // The group is inside one node: a token needs GPU j when one of its k rows lands there.
    const auto touch = [&](int64_t j) { return 1.0 - std::pow(1.0 - share[j], k); };
    for (int64_t j = 0; j < ep; ++j) {
      if (j == slot) continue;
      a.out.push_back({first + j, tokens_of(gpu) * touch(j) * bytes_per_copy});
      a.in.push_back({first + j, tokens_of(first + j) * touch(slot) * bytes_per_copy});
    }
    return a;
  }
  const int64_t nodes = ep / g, node = slot / g, local = slot % g;
  std::vector<double> node_share(size_t(nodes), 0.0), node_touch(size_t(nodes), 0.0), experts_there(size_t(nodes), 0.0);
  for (int64_t j = 0; j < ep; ++j) node_share[size_t(j / g)] += share[j];
  for (int64_t n = 0; n < nodes; ++n) {
    node_touch[size_t(n)] = std::min(1.0, routing.mean_nodes * node_share[size_t(n)]);
    experts_there[size_t(n)] = node_touch[size_t(n)] > 0 ? k * node_share[size_t(n)] / node_touch[size_t(n)] : 0.0;
  }
  // Chance that a token reaching node n's rail needs GPU j of that node.
  const auto gpu_touch = [&](int64_t j) {
    const double ns = node_share[size_t(j / g)];
    return ns > 0 ? 1.0 - std::pow(1.0 - share[j] / ns, experts_there[size_t(j / g)]) : 0.0;
  };
  // Copies arriving at rail `rail` of this node: tokens of every group GPU on that rail that need it.
  const auto arriving = [&](int64_t rail) {
    double sum = 0;
    for (int64_t n = 0; n < nodes; ++n) sum += tokens_of(first + n * g + rail);
    return sum * node_touch[size_t(node)];
  };
  for (int64_t n = 0; n < nodes; ++n) {
    if (n == node) continue;
    const int64_t peer = first + n * g + local;
    a.out.push_back({peer, tokens_of(gpu) * node_touch[size_t(n)] * bytes_per_copy});
    a.in.push_back({peer, tokens_of(peer) * node_touch[size_t(node)] * bytes_per_copy});
  }
  const double here = arriving(local);
  for (int64_t j = node * g; j < (node + 1) * g; ++j) {
    if (j == slot) continue;
    a.out.push_back({first + j, here * gpu_touch(j) * bytes_per_copy});
    a.in.push_back({first + j, arriving(j % g) * gpu_touch(slot) * bytes_per_copy});
  }
  return a;
}

AllToAll per_expert_all_to_all(const Plan& plan, int64_t gpu, const TokensOf& tokens_of, double bytes_per_copy,
                               const double* slot_share) {
  AllToAll a;
  const RankLayout layout(plan);
  if (!plan.model.is_moe() || layout.ep() == 1) return a;
  const std::vector<int64_t> group = layout.ep_group(gpu);
  const double k = double(plan.model.num_experts_per_tok), balanced = 1.0 / double(group.size());
  const auto share = [&](size_t j) { return slot_share ? slot_share[j] : balanced; };
  const size_t self = size_t(std::find(group.begin(), group.end(), gpu) - group.begin());
  for (size_t j = 0; j < group.size(); ++j) {
    if (j == self) continue;
    a.out.push_back({group[j], tokens_of(gpu) * k * share(j) * bytes_per_copy});
    a.in.push_back({group[j], tokens_of(group[j]) * k * share(self) * bytes_per_copy});
  }
  return a;
}

AllToAll all_gather_dispatch(const Plan& plan, int64_t gpu, const TokensOf& tokens_of, double bytes_per_copy) {
  AllToAll a;
  const RankLayout layout(plan);
  if (!plan.model.is_moe() || layout.ep() == 1) return a;
  DpGroup group;
  group.members = layout.ep_group(gpu);
  double gathered = 0;  // tokens of the whole group
  for (const int64_t member : group.members) gathered += tokens_of(member);
  const RingFlows ring = dp_ring_flows(plan, group, gpu, gathered, 0.0, bytes_per_copy);
  return {ring.out, ring.in};
}

AllToAll dispatcher_flows(const Plan& plan, const EpLayout& layout, const RoutingStats& routing, int64_t gpu,
                          const TokensOf& tokens_of, double bytes_per_copy, const double* slot_share) {
  switch (plan.parallel.moe_dispatcher) {
    case MoeDispatcher::AllToAll: return per_expert_all_to_all(plan, gpu, tokens_of, bytes_per_copy, slot_share);
    case MoeDispatcher::AllGather: return all_gather_dispatch(plan, gpu, tokens_of, bytes_per_copy);
    case MoeDispatcher::DeepEP: break;
  }
  return slot_share ? ep_all_to_all_loaded(plan, routing, gpu, tokens_of, bytes_per_copy, slot_share)
                    : ep_all_to_all(plan, layout, gpu, tokens_of, bytes_per_copy);
}

AllToAll rail_gathered(const Plan& plan, const AllToAll& per_peer, int64_t gpu) {
  const int64_t g = plan.nvlink_ranks(), node = gpu / g, local = gpu % g;
  const auto gather = [&](const std::vector<PeerFlow>& flows) {
    std::vector<PeerFlow> out;
    for (const PeerFlow& f : flows) {
      const int64_t peer = f.peer / g == node ? f.peer : f.peer / g * g + local;
      const auto it = std::find_if(out.begin(), out.end(), [&](const PeerFlow& o) { return o.peer == peer; });
      if (it == out.end()) out.push_back({peer, f.bytes});
      else it->bytes += f.bytes;
    }
    return out;
  };
  return {gather(per_peer.out), gather(per_peer.in)};
}

AllToAll reversed(const AllToAll& a) { return {a.in, a.out}; }

AllToAll ring_equivalent(const Plan& plan, const AllToAll& a, int64_t gpu) {
  AllToAll r;
  if (a.out.empty() && a.in.empty()) return r;
  const int64_t g = plan.nvlink_ranks(), node = gpu / g;
  const FabricShape fabric = FabricShape::of(plan);
  // Peers by the links a flow to them loads: NVLink (0), IB under this NIC's leaf (1), IB over the
  // spines (2). On a star there is no class 2, and the flows are the two of before.
  const auto kind = [&](int64_t peer) { return peer / g == node ? 0 : fabric.crosses_spine(gpu, peer) ? 2 : 1; };
  const auto sum = [&](const std::vector<PeerFlow>& flows, int k) {
    double s = 0;
    for (const auto& f : flows)
      if (kind(f.peer) == k) s += f.bytes;
    return s;
  };
  // Ring neighbours among the peers of each kind. NVLink and same-leaf peers form cliques (every
  // member sees the same set), so the ring in peer order is the same from each member. Peers over
  // the spines do not (each GPU leaves out its own leaf): their ring runs over the IB peers of
  // every leaf, interleaved (the first GPU of each leaf in turn, then the second, ...), which each
  // member builds alike and whose neighbours sit under other leaves when the leaves hold equally
  // many. Both ends must agree: a sender's `next` is its receiver's `prev`.
  const auto neighbours = [&](int k) {
    std::vector<int64_t> ids = {gpu};
    for (const auto& f : a.out)
      if (kind(f.peer) == k || (k == 2 && kind(f.peer) == 1)) ids.push_back(f.peer);
    std::sort(ids.begin(), ids.end());
    if (k == 2) {
      // Stable by leaf rank within the leaf: (i-th member of its leaf, leaf).
      std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> keyed;
      for (const int64_t id : ids) {
        int64_t rank = 0;
        for (const int64_t other : ids)
          if (other < id && fabric.leaf_of(other) == fabric.leaf_of(id)) ++rank;
        keyed.push_back({{rank, fabric.leaf_of(id)}, id});
      }
      std::sort(keyed.begin(), keyed.end());
      for (size_t i = 0; i < keyed.size(); ++i) ids[i] = keyed[i].second;
    }
    const auto it = std::find(ids.begin(), ids.end(), gpu);
    const size_t i = size_t(it - ids.begin()), n = ids.size();
    return std::pair{ids[(i + 1) % n], ids[(i + n - 1) % n]};
  };
  for (const int k : {1, 2, 0}) {
    const double out = sum(a.out, k), in = sum(a.in, k);
    if (out <= 0 && in <= 0) continue;
    const auto [next, prev] = neighbours(k);
    r.out.push_back({next, out});
    r.in.push_back({prev, in});
  }
  return r;
}

AllToAll without_hidden_nvlink(const PlatformSpec& spec, const AllToAll& ring, int64_t gpu) {
  const int64_t g = spec.nvlink_ranks > 0 ? spec.nvlink_ranks : spec.gpus_per_node;
  const auto hidden = [&](const std::vector<PeerFlow>& flows) {
    double nvlink = 0, ib = 0;
    for (const PeerFlow& f : flows) (f.peer / g == gpu / g ? nvlink : ib) += f.bytes;
    if (nvlink <= 0) return true;
    return ib > 0 && spec.nvlink_Bps > 0 && spec.ib_Bps > 0 &&
           spec.nvlink_latency_s + nvlink / spec.nvlink_Bps <= spec.ib_latency_s + ib / spec.ib_Bps;
  };
  if (!hidden(ring.out) || !hidden(ring.in)) return ring;
  AllToAll r;
  for (const PeerFlow& f : ring.out)
    if (f.peer / g != gpu / g) r.out.push_back(f);
  for (const PeerFlow& f : ring.in)
    if (f.peer / g != gpu / g) r.in.push_back(f);
  return r;
}

}  // namespace stepsim
