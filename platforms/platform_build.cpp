// Builds the cluster with the s4u C++ API.
//
// Layout (platforms/topology.hpp): the root is a Star zone over zones of whole nodes: an NVLink
// domain on a star fabric, else the larger of a domain and a leaf's node group. Each zone is a Full
// zone with its GPU hosts and a gateway router:
//   GPU a -> GPU b, same NVLink domain : nvl-a_UP, nvl-b_DOWN
//   GPU a -> GPU b, same zone, other domain, same leaf : ib-a_UP, ib-b_DOWN
//   ... different leaves : ib-a_UP, up-a_UP, up-b_DOWN, ib-b_DOWN
//   GPU a -> gateway : ib-a_UP (+ up-a_UP on a fat tree)   (gateway -> GPU a: the reverse halves)
// and the root's route to a zone is empty on a star (a non-blocking fabric is one big switch at
// flow level; its latency is folded into the NIC links) or the zone's aggregate uplink spine-z<k>
// on a fat tree, so a route between zones is ib-a_UP, [up-a_UP, spine-zA_UP, spine-zB_DOWN,
// up-b_DOWN,] ib-b_DOWN.
// Multi-plane: NICs of different planes never meet in the fabric; a transfer from plane k lands on
// the destination node's NIC k and crosses NVLink to its GPU (DeepEP's forwarding), inside a zone.
// A GPU whose NIC is down (scenario.stragglers) uses GPU v of its node:
//   GPU a -> gateway : nvl-a_UP, nvl-v_DOWN, ib-v_UP, ...  (and back: ..., ib-v_DOWN, nvl-v_UP, nvl-a_DOWN)
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <simgrid/kernel/ProfileBuilder.hpp>

#include "platforms/cluster_platform.hpp"
#include "platforms/degraded_hardware.hpp"
#include "platforms/topology.hpp"

namespace stepsim {
namespace {

namespace sg4 = simgrid::s4u;
using Dir = sg4::LinkInRoute::Direction;
using Route = std::vector<sg4::LinkInRoute>;
using simgrid::kernel::profile::ProfileBuilder;

struct GpuResources {
  sg4::Host* host = nullptr;
  sg4::Link* nvlink = nullptr;  // nullptr on a one-GPU node
  sg4::Link* ib = nullptr;
  sg4::Link* up = nullptr;  // the NIC's share of its leaf's uplinks; nullptr on a star
};

// `degraded`: the bandwidth over time of a straggling link (both directions); SimGrid takes a
// bandwidth profile only before the link is sealed.
sg4::Link* split_duplex(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency,
                        const Timeline& degraded = {}) {
  sg4::Link* link = zone->create_split_duplex_link(name, bandwidth);
  link->set_latency(latency);
  if (!degraded.empty())
    for (const char* half : {"_UP", "_DOWN"})
      sg4::Link::by_name(name + half)
          ->set_bandwidth_profile(ProfileBuilder::from_string("bw-" + name + half, profile_text(degraded), -1));
  return link->seal();
}

Route to_links(const HopList& hops, const std::vector<GpuResources>& gpus, int64_t first_gpu) {
  Route r;
  r.reserve(hops.size());
  for (const Hop& h : hops) {
    const GpuResources& g = gpus[size_t(h.gpu - first_gpu)];
    sg4::Link* link = h.kind == LinkKind::NvLink ? g.nvlink : h.kind == LinkKind::Nic ? g.ib : g.up;
    r.emplace_back(link, h.up ? Dir::UP : Dir::DOWN);
  }
  return r;
}

// One zone: a Full zone holding the GPUs of nodes [first_node, end_node) and a gateway router.
// Appends the hosts. The links are created in the root zone: SimGrid 3.32 checks every new link
// name against all zones, child by child, so links spread over 256 zones made the build quadratic
// (0.11 s vs 0.05 s at 2048 GPUs). Where a link is declared does not change routes or sharing.
void build_zone(sg4::NetZone* root, const PlatformSpec& spec, const FabricShape& shape, int64_t zone_index,
                const std::vector<int64_t>& detours, std::vector<sg4::Host*>& hosts) {
  const int64_t G = spec.gpus_per_node;
  const int64_t first_node = zone_index * shape.zone_nodes();
  const int64_t end_node = std::min(spec.nodes, first_node + shape.zone_nodes());
  std::string zone_name = "n";
  zone_name += std::to_string(first_node);
  if (end_node - first_node > 1) zone_name = fmt::format("z{}", zone_index);
  sg4::NetZone* zone = sg4::create_full_zone(zone_name);
  zone->set_parent(root);

  const std::vector<double> pstates = {spec.gpu_flops, spec.gpu_flops * spec.comm_speed_factor};
  const int64_t first_gpu = first_node * G, end_gpu = end_node * G;
  std::vector<GpuResources> gpus(size_t(end_gpu - first_gpu));
  for (int64_t id = first_gpu; id < end_gpu; ++id) {
    GpuResources& r = gpus[size_t(id - first_gpu)];
    const int64_t node = id / G, g = id % G;
    r.host = zone->create_host(gpu_host_name(node, g), pstates)->seal();
    // A clock factor scales the host's speed in every pstate: it combines with the SM tax.
    if (const Timeline slow = gpu_speed_factor(spec, id); !slow.empty())
      r.host->set_speed_profile(ProfileBuilder::from_string("speed-" + r.host->get_name(), profile_text(slow), -1));
    if (shape.nvlink_ranks > 1)
      r.nvlink = split_duplex(root, nvlink_link_name(node, g), spec.nvlink_Bps, spec.nvlink_latency_s / 2,
                              nvlink_bandwidth(spec, id));
    r.ib = split_duplex(root, ib_link_name(node, g), spec.ib_Bps, spec.ib_latency_s / 2, nic_bandwidth(spec, id));
    if (shape.has_leaves())
      r.up = split_duplex(root, uplink_name(node, g), spec.ib_Bps / spec.oversubscription, 0, uplink_bandwidth(spec, id));
    hosts.push_back(r.host);
  }
  auto* gateway = zone->create_router(zone_name + "-gw");

  const auto links = [&](const HopList& hops) { return to_links(hops, gpus, first_gpu); };
  for (int64_t a = first_gpu; a < end_gpu; ++a) {
    auto* pa = gpus[size_t(a - first_gpu)].host->get_netpoint();
    for (int64_t b = first_gpu; b < end_gpu; ++b) {
      if (a == b) continue;  // a host's route to itself is the zone's loopback
      zone->add_route(pa, gpus[size_t(b - first_gpu)].host->get_netpoint(), nullptr, nullptr,
                      links(route_between(shape, detours, a, b)), /*symmetrical=*/false);
    }
    zone->add_route(pa, gateway, nullptr, nullptr, links(route_to_gateway(shape, detours, a)), false);
    zone->add_route(gateway, pa, nullptr, nullptr, links(route_from_gateway(shape, detours, a)), false);
  }
  zone->seal();

  // The fabric: reaching this zone from any other goes through its gateway, over nothing more on a
  // star, over the zone's aggregate uplink (never tighter than its NICs' shares) on a fat tree.
  if (!shape.has_leaves()) {
    root->add_route(zone->get_netpoint(), nullptr, gateway, gateway, {}, /*symmetrical=*/true);
    return;
  }
  sg4::Link* spine = split_duplex(root, zone_spine_name(zone_index),
                                  double(end_gpu - first_gpu) * spec.ib_Bps / spec.oversubscription, 0);
  root->add_route(zone->get_netpoint(), nullptr, gateway, gateway, {sg4::LinkInRoute(spine, Dir::UP)}, false);
  root->add_route(nullptr, zone->get_netpoint(), gateway, gateway, {sg4::LinkInRoute(spine, Dir::DOWN)}, false);
}

}  // namespace

std::vector<sg4::Host*> build_platform(sg4::Engine& engine, const PlatformSpec& spec) {
  validate_platform_spec(spec);
  if (engine.get_netzone_root() != nullptr)
    throw std::logic_error("build_platform: the engine already has a platform");
  sg4::NetZone* root = sg4::create_star_zone("cluster");  // the first zone becomes the root

  const FabricShape shape = spec.shape();
  std::vector<sg4::Host*> hosts;
  hosts.reserve(size_t(spec.nodes * spec.gpus_per_node));
  const std::vector<int64_t> detours = nic_detours(spec);
  for (int64_t z = 0; z < shape.zones(); ++z) build_zone(root, spec, shape, z, detours, hosts);
  root->seal();
  return hosts;
}

}  // namespace stepsim
