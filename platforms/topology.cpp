#include "platforms/topology.hpp"

#include <algorithm>
#include <cmath>

namespace stepsim {

FabricShape FabricShape::of(const Plan& plan) {
  FabricShape f;
  f.nodes = plan.cluster.nodes;
  f.gpus_per_node = plan.cluster.gpus_per_node;
  f.nvlink_ranks = plan.nvlink_ranks();
  f.topology = plan.cluster.topology;
  f.oversubscription = plan.cluster.oversubscription;
  f.rail_optimized = plan.cluster.rail_optimized;
  f.leaf_nics = plan.cluster.leaf_nics;
  return f;
}

int64_t FabricShape::leaf_of(int64_t gpu) const {
  if (!has_leaves()) return -1;
  const int64_t node = gpu / gpus_per_node;
  if (rails()) return node / leaf_nics * gpus_per_node + gpu % gpus_per_node;
  return gpu / leaf_nics;
}

int64_t FabricShape::leaves() const {
  if (!has_leaves()) return 0;
  if (rails()) return (nodes + leaf_nics - 1) / leaf_nics * gpus_per_node;
  return (gpus() + leaf_nics - 1) / leaf_nics;
}

int64_t FabricShape::spines() const {
  return std::max<int64_t>(1, std::llround(double(leaf_nics) / oversubscription));
}

int64_t FabricShape::zone_nodes() const {
  const int64_t domain_nodes = std::max<int64_t>(1, nvlink_ranks / gpus_per_node);
  if (!has_leaves()) return domain_nodes;
  return std::max(domain_nodes, leaf_nodes());
}

std::string fabric_problem(const FabricShape& f) {
  const auto s = [](int64_t v) { return std::to_string(v); };
  if (f.nvlink_ranks % f.gpus_per_node != 0)
    return "cluster.nvlink_domain: a domain must hold whole nodes of " + s(f.gpus_per_node) + " GPUs";
  if (f.gpus() % f.nvlink_ranks != 0)
    return "cluster.nvlink_domain: each NVLink domain runs " + s(f.nvlink_ranks) + " ranks (whole EP groups), which "
           "does not divide the " + s(f.gpus()) + " GPUs; change cluster.nodes or the domain";
  if (!f.has_leaves()) return "";  // leaf keys on a star: the config's schema refuses them (unread)
  if (f.oversubscription < 1)
    return "cluster.oversubscription: a leaf's down:up bandwidth ratio is at least 1 (1 = non-blocking)";
  if (!f.rails() && f.leaf_nics % f.gpus_per_node != 0)
    return "cluster.leaf_nics: a plain (not rail-optimised) leaf holds whole nodes; use a multiple of " +
           s(f.gpus_per_node) + " or set cluster.rail_optimized=true";
  const int64_t domain_nodes = f.nvlink_ranks / f.gpus_per_node, leaf_nodes = f.leaf_nodes();
  if (domain_nodes % leaf_nodes != 0 && leaf_nodes % domain_nodes != 0)
    return "cluster.leaf_nics: a leaf's " + s(leaf_nodes) + " nodes and an NVLink domain's " + s(domain_nodes) +
           " nodes must nest (one a multiple of the other)";
  return "";
}

namespace {

int64_t nic(const std::vector<int64_t>& nic_of, int64_t gpu) {
  return nic_of.empty() || nic_of[size_t(gpu)] < 0 ? gpu : nic_of[size_t(gpu)];
}

// Over NVLink from `from` into `to` (nothing when they are the same GPU).
void nvlink_hop(HopList& r, int64_t from, int64_t to) {
  if (from == to) return;
  r.push_back({LinkKind::NvLink, from, true});
  r.push_back({LinkKind::NvLink, to, false});
}

}  // namespace

HopList route_between(const FabricShape& f, const std::vector<int64_t>& nic_of, int64_t a, int64_t b) {
  HopList r;
  if (f.same_nvlink_domain(a, b)) {
    nvlink_hop(r, a, b);
    return r;
  }
  const int64_t sa = nic(nic_of, a);
  int64_t db = nic(nic_of, b);
  const int64_t G = f.gpus_per_node;
  // Planes never meet: land on the destination node's NIC of the sender's plane.
  if (f.topology == Topology::MultiPlane && sa % G != db % G) db = b / G * G + sa % G;
  nvlink_hop(r, a, sa);
  r.push_back({LinkKind::Nic, sa, true});
  if (f.crosses_spine(sa, db)) {
    r.push_back({LinkKind::Uplink, sa, true});
    r.push_back({LinkKind::Uplink, db, false});
  }
  r.push_back({LinkKind::Nic, db, false});
  nvlink_hop(r, db, b);
  return r;
}

HopList route_to_gateway(const FabricShape& f, const std::vector<int64_t>& nic_of, int64_t a) {
  HopList r;
  const int64_t sa = nic(nic_of, a);
  nvlink_hop(r, a, sa);
  r.push_back({LinkKind::Nic, sa, true});
  if (f.has_leaves()) r.push_back({LinkKind::Uplink, sa, true});
  return r;
}

HopList route_from_gateway(const FabricShape& f, const std::vector<int64_t>& nic_of, int64_t b) {
  HopList r;
  const int64_t db = nic(nic_of, b);
  if (f.has_leaves()) r.push_back({LinkKind::Uplink, db, false});
  r.push_back({LinkKind::Nic, db, false});
  nvlink_hop(r, db, b);
  return r;
}

std::string uplink_name(int64_t node, int64_t local) {
  return "up-n" + std::to_string(node) + "g" + std::to_string(local);
}
std::string zone_spine_name(int64_t zone) { return "spine-z" + std::to_string(zone); }
std::string leaf_spine_link_name(int64_t leaf, int64_t spine) {
  return "leaf" + std::to_string(leaf) + "-spine" + std::to_string(spine);
}

}  // namespace stepsim
