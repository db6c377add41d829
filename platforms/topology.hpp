// Where every GPU sits in the network: its NVLink domain, its leaf switch and the zone of the
// SimGrid platform that holds it. One description serves the C++ platform builder, the XML writer,
// the workload's traffic split and the roofline's topology terms.
//
// Topologies (cluster.topology):
//   star         every NIC into one non-blocking switch (the fabric is a big switch at flow level);
//   fat-tree     two levels: leaf switches of cluster.leaf_nics NICs, spines above them; a leaf's
//                uplinks carry 1 / cluster.oversubscription of its NICs' bandwidth. A plain leaf
//                holds whole nodes; a rail-optimised one (cluster.rail_optimized) holds NIC k of
//                leaf_nics consecutive nodes, so rail-matched traffic among them stays under it;
//   multi-plane  DeepSeek's: NIC k of every node on plane k, each plane its own two-level fat tree
//                (leaves as rail-optimised); planes never meet, so traffic between NICs of different
//                planes crosses NVLink inside the destination node (as DeepEP forwards it).
// Spine routing: ideal spreading over the spines (adaptive routing / packet spraying, not static
// ECMP hashing). At flow level a NIC leaving its leaf then gets its fair share of the leaf's
// uplinks, link_bandwidth / oversubscription, modelled as one private "up" link per NIC: exact when
// every NIC of a leaf is equally busy (all-to-all, rings: what binds the spine, and what reduced
// mode assumes), pessimistic for a lone flow, which a real leaf would let use idle NICs' share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

struct FabricShape {
  int64_t nodes = 1;
  int64_t gpus_per_node = 1;
  int64_t nvlink_ranks = 1;  // consecutive GPUs sharing one NVLink domain (Plan::nvlink_ranks)
  Topology topology = Topology::Star;
  double oversubscription = 1;
  bool rail_optimized = false;
  int64_t leaf_nics = 32;

  static FabricShape of(const Plan& plan);

  int64_t gpus() const { return nodes * gpus_per_node; }
  bool has_leaves() const { return topology != Topology::Star; }
  bool rails() const { return topology == Topology::MultiPlane || rail_optimized; }
  // Nodes whose NICs share leaf switches: leaf_nics / gpus_per_node, or leaf_nics with rails.
  int64_t leaf_nodes() const { return rails() ? leaf_nics : leaf_nics / gpus_per_node; }
  // -1 on a star; else the leaf switch of the GPU's NIC.
  int64_t leaf_of(int64_t gpu) const;
  int64_t leaves() const;
  // Spine links per leaf: leaf_nics / oversubscription rounded, at least 1.
  int64_t spines() const;
  bool same_nvlink_domain(int64_t a, int64_t b) const { return a / nvlink_ranks == b / nvlink_ranks; }
  // An inter-node transfer between these NICs climbs to the spines.
  bool crosses_spine(int64_t a, int64_t b) const { return has_leaves() && leaf_of(a) != leaf_of(b); }
  // Nodes per zone of the SimGrid platform: an NVLink domain on a star; else the larger of a
  // domain and a leaf's node group (one holds whole copies of the other; validated).
  int64_t zone_nodes() const;
  int64_t zone_of(int64_t gpu) const { return gpu / gpus_per_node / zone_nodes(); }
  int64_t zones() const { return (nodes + zone_nodes() - 1) / zone_nodes(); }
};

// One half of a link on a route: the GPU's NVLink port, NIC, or NIC's uplink share; up = _UP.
enum class LinkKind { NvLink, Nic, Uplink };
struct Hop {
  LinkKind kind;
  int64_t gpu;
  bool up;
  bool operator==(const Hop&) const = default;
};
using HopList = std::vector<Hop>;

// Routes inside one zone of the platform (a != b, both in the zone), toward the zone's gateway and
// back from it; `nic_of[gpu]` is the GPU whose NIC carries its traffic (itself unless its NIC is
// down; empty = all healthy). The C++ builder and the XML writer both follow these.
HopList route_between(const FabricShape& f, const std::vector<int64_t>& nic_of, int64_t a, int64_t b);
HopList route_to_gateway(const FabricShape& f, const std::vector<int64_t>& nic_of, int64_t a);
HopList route_from_gateway(const FabricShape& f, const std::vector<int64_t>& nic_of, int64_t b);

// Empty when the shape is consistent; else what is wrong, naming the key to change.
std::string fabric_problem(const FabricShape& f);

// Link names, stable and documented: "up-n<node>g<local>" (a NIC's share of its leaf's uplinks),
// "spine-z<zone>" (a zone's uplinks in aggregate, the route between zones), "leaf<j>-spine<s>"
// (a leaf-spine cable, named by link faults).
std::string uplink_name(int64_t node, int64_t local);
std::string zone_spine_name(int64_t zone);
std::string leaf_spine_link_name(int64_t leaf, int64_t spine);

}  // namespace stepsim
