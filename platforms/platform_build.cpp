// Builds the cluster with the s4u C++ API.
//
// Layout: the root is a Star zone whose routes to the node zones carry no links (a non-blocking
// fabric is one big switch at flow level; its latency is folded into the NIC links). Each node is
// a Full zone with its GPU hosts and a gateway router:
//   GPU a -> GPU b, same node : nvl-a_UP, nvl-b_DOWN
//   GPU a -> gateway          : ib-a_UP      (gateway -> GPU a : ib-a_DOWN)
// so a route between nodes is ib-a_UP, ib-b_DOWN and nothing else.
// A GPU whose NIC is down (scenario.stragglers) reaches the gateway through GPU v of its node:
//   GPU a -> gateway : nvl-a_UP, nvl-v_DOWN, ib-v_UP  (and back: ib-v_DOWN, nvl-v_UP, nvl-a_DOWN)
#include <stdexcept>
#include <string>
#include <vector>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <simgrid/kernel/ProfileBuilder.hpp>

#include "platforms/cluster_platform.hpp"
#include "platforms/degraded_hardware.hpp"

namespace stepsim {
namespace {

namespace sg4 = simgrid::s4u;
using Dir = sg4::LinkInRoute::Direction;
using simgrid::kernel::profile::ProfileBuilder;

struct GpuResources {
  sg4::Host* host = nullptr;
  sg4::Link* nvlink = nullptr;  // nullptr on a one-GPU node
  sg4::Link* ib = nullptr;
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

// One node: a Full zone holding its GPUs and a gateway router. Appends the hosts.
// The GPUs' links are created in the root zone: SimGrid 3.32 checks every new link name against all
// zones, child by child, so links spread over 256 node zones made the build quadratic (0.11 s vs
// 0.05 s at 2048 GPUs). Where a link is declared does not change routes or sharing.
void build_node(sg4::NetZone* root, const PlatformSpec& spec, int64_t node, const std::vector<int64_t>& detours,
                std::vector<sg4::Host*>& hosts) {
  std::string node_name = "n";
  node_name += std::to_string(node);
  sg4::NetZone* zone = sg4::create_full_zone(node_name);
  zone->set_parent(root);

  const int64_t G = spec.gpus_per_node;
  const std::vector<double> pstates = {spec.gpu_flops, spec.gpu_flops * spec.comm_speed_factor};
  std::vector<GpuResources> gpus(static_cast<size_t>(G));
  for (int64_t g = 0; g < G; ++g) {
    GpuResources& r = gpus[size_t(g)];
    const int64_t id = node * G + g;
    r.host = zone->create_host(gpu_host_name(node, g), pstates)->seal();
    // A clock factor scales the host's speed in every pstate: it combines with the SM tax.
    if (const Timeline slow = gpu_speed_factor(spec, id); !slow.empty())
      r.host->set_speed_profile(ProfileBuilder::from_string("speed-" + r.host->get_name(), profile_text(slow), -1));
    if (G > 1)
      r.nvlink = split_duplex(root, nvlink_link_name(node, g), spec.nvlink_Bps, spec.nvlink_latency_s / 2,
                              nvlink_bandwidth(spec, id));
    r.ib = split_duplex(root, ib_link_name(node, g), spec.ib_Bps, spec.ib_latency_s / 2, nic_bandwidth(spec, id));
    hosts.push_back(r.host);
  }
  auto* gateway = zone->create_router(node_name + "-gw");

  for (int64_t a = 0; a < G; ++a) {
    const GpuResources& ra = gpus[size_t(a)];
    for (int64_t b = 0; b < G; ++b) {
      if (a == b) continue;  // a host's route to itself is the zone's loopback
      const GpuResources& rb = gpus[size_t(b)];
      zone->add_route(ra.host->get_netpoint(), rb.host->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(ra.nvlink, Dir::UP), sg4::LinkInRoute(rb.nvlink, Dir::DOWN)},
                      /*symmetrical=*/false);
    }
    if (const int64_t via = detours[size_t(node * G + a)]; via >= 0) {
      // NIC down: over NVLink into the lending GPU, out through its NIC (and back the same way).
      const GpuResources& rv = gpus[size_t(via % G)];
      zone->add_route(ra.host->get_netpoint(), gateway, nullptr, nullptr,
                      {sg4::LinkInRoute(ra.nvlink, Dir::UP), sg4::LinkInRoute(rv.nvlink, Dir::DOWN),
                       sg4::LinkInRoute(rv.ib, Dir::UP)},
                      false);
      zone->add_route(gateway, ra.host->get_netpoint(), nullptr, nullptr,
                      {sg4::LinkInRoute(rv.ib, Dir::DOWN), sg4::LinkInRoute(rv.nvlink, Dir::UP),
                       sg4::LinkInRoute(ra.nvlink, Dir::DOWN)},
                      false);
      continue;
    }
    zone->add_route(ra.host->get_netpoint(), gateway, nullptr, nullptr, {sg4::LinkInRoute(ra.ib, Dir::UP)}, false);
    zone->add_route(gateway, ra.host->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(ra.ib, Dir::DOWN)}, false);
  }
  zone->seal();

  // The fabric: reaching this node from any other goes through its gateway, over no extra link.
  root->add_route(zone->get_netpoint(), nullptr, gateway, gateway, {}, /*symmetrical=*/true);
}

}  // namespace

std::vector<sg4::Host*> build_platform(sg4::Engine& engine, const PlatformSpec& spec) {
  validate_platform_spec(spec);
  if (engine.get_netzone_root() != nullptr)
    throw std::logic_error("build_platform: the engine already has a platform");
  sg4::NetZone* root = sg4::create_star_zone("cluster");  // the first zone becomes the root

  std::vector<sg4::Host*> hosts;
  hosts.reserve(size_t(spec.nodes * spec.gpus_per_node));
  const std::vector<int64_t> detours = nic_detours(spec);
  for (int64_t node = 0; node < spec.nodes; ++node) build_node(root, spec, node, detours, hosts);
  root->seal();
  return hosts;
}

}  // namespace stepsim
