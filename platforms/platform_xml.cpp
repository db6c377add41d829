// Writes the cluster as a SimGrid XML platform (DTD 4.1).
//
// SimGrid 3.32's XML parser knows no Star routing ("Not a valid model!") and refuses zone routes
// without links, so the C++ layout (Star root over per-node Full zones) cannot be written as is.
// The file gives the same routes another way: one Cluster-routed zone holds every GPU, each with
// its IB NIC as private split-duplex link (<host_link>) and no backbone, so a route between any two
// GPUs is ib-a_UP, ib-b_DOWN; <bypassRoute>s send GPU pairs of one node over their NVLink halves
// and a GPU's transfers to itself over the loopback, as the node zones of the C++ build do.
#include <fmt/format.h>
#include <charconv>
#include <string>

#include "platforms/cluster_platform.hpp"
#include "platforms/topology.hpp"

namespace stepsim {
namespace {

// Shortest text that reads back as the same double.
std::string num(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

void add_link(std::string& out, const std::string& name, double bandwidth, double latency) {
  out += "    <link id=\"" + name + "\" bandwidth=\"" + num(bandwidth) + "Bps\" latency=\"" + num(latency) +
         "s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
}

std::string link_of(const Hop& h, int64_t G) {
  const int64_t n = h.gpu / G, g = h.gpu % G;
  const std::string name = h.kind == LinkKind::NvLink ? nvlink_link_name(n, g)
                           : h.kind == LinkKind::Nic  ? ib_link_name(n, g)
                                                      : uplink_name(n, g);
  return "<link_ctn id=\"" + name + "\" direction=\"" + (h.up ? "UP" : "DOWN") + "\"/>";
}

void add_route(std::string& out, const std::string& indent, const std::string& src, const std::string& dst,
               const HopList& hops, int64_t G) {
  out += indent + "<route src=\"" + src + "\" dst=\"" + dst + "\" symmetrical=\"NO\">";
  for (const Hop& h : hops) out += link_of(h, G);
  out += "</route>\n";
}

// The XML declaration, the DTD, a comment saying what the file is ("stepsim cluster: N nodes x G
// GPU" + `what`) and the opening platform tag.
std::string prologue(const std::string& what, const PlatformSpec& spec) {
  return "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<!-- stepsim cluster: " +
         std::to_string(spec.nodes) + " nodes x " + std::to_string(spec.gpus_per_node) + " " + escape(spec.gpu_name) +
         what + " -->\n<platform version=\"4.1\">\n";
}

// A fat tree: the C++ build's zones (Full), each with its hosts, links and every route of
// platforms/topology.hpp, under a Full root whose zone routes cross the zones' spine-z links.
std::string leaf_spine_xml(const PlatformSpec& spec, const FabricShape& f) {
  const int64_t G = spec.gpus_per_node;
  const std::vector<int64_t> healthy;
  std::string out = prologue(", " + std::string(to_string(f.topology)) + (f.rails() ? " (rail-optimised)" : "") +
                             ", leaves of " + std::to_string(f.leaf_nics) + " NICs, oversubscription " +
                             num(f.oversubscription) + ":1, NVLink domains of " + std::to_string(f.nvlink_ranks) +
                             " GPUs.\n"
                             "     Host speeds: pstate 0 = full FP8 rate, pstate 1 = rate while comm kernels hold SMs.\n"
                             "     Routes: same NVLink domain = nvl-a_UP, nvl-b_DOWN; same leaf = ib-a_UP, ib-b_DOWN; "
                             "other leaf =\n"
                             "     ib-a_UP, up-a_UP, [spine-zA_UP, spine-zB_DOWN,] up-b_DOWN, ib-b_DOWN (up-*: a NIC's "
                             "share of its\n"
                             "     leaf's uplinks). Load with network/model:CM02 and network/crosstraffic:0.",
                             spec);
  out += "  <zone id=\"cluster\" routing=\"Full\">\n";
  const std::string speeds = num(spec.gpu_flops) + "f," + num(spec.gpu_flops * spec.comm_speed_factor) + "f";
  std::vector<std::string> zone_names;
  for (int64_t z = 0; z < f.zones(); ++z) {
    const int64_t first_node = z * f.zone_nodes(), end_node = std::min(spec.nodes, first_node + f.zone_nodes());
    const std::string zone = end_node - first_node > 1 ? fmt::format("z{}", z) : fmt::format("n{}", first_node);
    zone_names.push_back(zone);
    out += "    <zone id=\"" + zone + "\" routing=\"Full\">\n";
    for (int64_t id = first_node * G; id < end_node * G; ++id)
      out += "      <host id=\"" + gpu_host_name(id / G, id % G) + "\" speed=\"" + speeds + "\"/>\n";
    out += "      <router id=\"" + zone + "-gw\"/>\n";
    for (int64_t id = first_node * G; id < end_node * G; ++id) {
      const int64_t n = id / G, g = id % G;
      if (f.nvlink_ranks > 1) add_link(out, nvlink_link_name(n, g), spec.nvlink_Bps, spec.nvlink_latency_s / 2);
      add_link(out, ib_link_name(n, g), spec.ib_Bps, spec.ib_latency_s / 2);
      add_link(out, uplink_name(n, g), spec.ib_Bps / spec.oversubscription, 0);
    }
    for (int64_t a = first_node * G; a < end_node * G; ++a) {
      const std::string ha = gpu_host_name(a / G, a % G);
      for (int64_t b = first_node * G; b < end_node * G; ++b)
        if (a != b) add_route(out, "      ", ha, gpu_host_name(b / G, b % G), route_between(f, healthy, a, b), G);
      add_route(out, "      ", ha, zone + "-gw", route_to_gateway(f, healthy, a), G);
      add_route(out, "      ", zone + "-gw", ha, route_from_gateway(f, healthy, a), G);
    }
    out += "    </zone>\n";
  }
  for (int64_t z = 0; z < f.zones(); ++z) {
    const int64_t first_node = z * f.zone_nodes(), end_node = std::min(spec.nodes, first_node + f.zone_nodes());
    add_link(out, zone_spine_name(z), double((end_node - first_node) * G) * spec.ib_Bps / spec.oversubscription, 0);
  }
  for (int64_t a = 0; a < f.zones(); ++a)
    for (int64_t b = 0; b < f.zones(); ++b) {
      if (a == b) continue;
      out += "    <zoneRoute src=\"" + zone_names[size_t(a)] + "\" dst=\"" + zone_names[size_t(b)] + "\" gw_src=\"" +
             zone_names[size_t(a)] + "-gw\" gw_dst=\"" + zone_names[size_t(b)] + "-gw\" symmetrical=\"NO\"><link_ctn id=\"" +
             zone_spine_name(a) + "\" direction=\"UP\"/><link_ctn id=\"" + zone_spine_name(b) +
             "\" direction=\"DOWN\"/></zoneRoute>\n";
    }
  out += "  </zone>\n</platform>\n";
  return out;
}

}  // namespace

std::string platform_xml(const PlatformSpec& spec) {
  validate_platform_spec(spec);
  const FabricShape shape = spec.shape();
  if (shape.has_leaves()) return leaf_spine_xml(spec, shape);
  const int64_t N = spec.nodes;
  const int64_t G = spec.gpus_per_node;
  std::string out = prologue(". Host speeds: pstate 0 = full FP8 rate, pstate 1 = rate while comm kernels hold SMs.\n"
                             "     Routes: same node = nvl-a_UP, nvl-b_DOWN; across nodes = ib-a_UP, ib-b_DOWN "
                             "(non-blocking fabric).\n"
                             "     Load with network/model:CM02 and network/crosstraffic:0 for exact size/bandwidth times.",
                             spec);
  out.reserve(size_t(N * G) * size_t(160 + 140 * G));
  out += "  <zone id=\"cluster\" routing=\"Cluster\">\n";

  const std::string speeds = num(spec.gpu_flops) + "f," + num(spec.gpu_flops * spec.comm_speed_factor) + "f";
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) out += "    <host id=\"" + gpu_host_name(n, g) + "\" speed=\"" + speeds + "\"/>\n";

  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      if (shape.nvlink_ranks > 1) add_link(out, nvlink_link_name(n, g), spec.nvlink_Bps, spec.nvlink_latency_s / 2);
      add_link(out, ib_link_name(n, g), spec.ib_Bps, spec.ib_latency_s / 2);
    }

  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const std::string ib = ib_link_name(n, g);
      out += "    <host_link id=\"" + gpu_host_name(n, g) + "\" up=\"" + ib + "_UP\" down=\"" + ib + "_DOWN\"/>\n";
    }

  // Every GPU pair of one NVLink domain (a node unless cluster.nvlink_domain is larger).
  const int64_t U = shape.nvlink_ranks;
  for (int64_t first = 0; first < N * G; first += U)
    for (int64_t a = first; a < first + U; ++a)
      for (int64_t b = first; b < first + U; ++b) {
        out += "    <bypassRoute src=\"" + gpu_host_name(a / G, a % G) + "\" dst=\"" + gpu_host_name(b / G, b % G) + "\">";
        if (a == b)
          out += "<link_ctn id=\"__loopback__\"/>";
        else
          out += "<link_ctn id=\"" + nvlink_link_name(a / G, a % G) + "\" direction=\"UP\"/><link_ctn id=\"" +
                 nvlink_link_name(b / G, b % G) + "\" direction=\"DOWN\"/>";
        out += "</bypassRoute>\n";
      }

  out += "  </zone>\n</platform>\n";
  return out;
}

}  // namespace stepsim
