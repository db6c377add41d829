// Writes the cluster as a SimGrid XML platform (DTD 4.1).
//
// SimGrid 3.32's XML parser knows no Star routing ("Not a valid model!") and refuses zone routes
// without links, so the C++ layout (Star root over per-node Full zones) cannot be written as is.
// The file gives the same routes another way: one Cluster-routed zone holds every GPU, each with
// its IB NIC as private split-duplex link (<host_link>) and no backbone, so a route between any two
// GPUs is ib-a_UP, ib-b_DOWN; <bypassRoute>s send GPU pairs of one node over their NVLink halves
// and a GPU's transfers to itself over the loopback, as the node zones of the C++ build do.
#include <charconv>
#include <string>

#include "platforms/cluster_platform.hpp"

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

}  // namespace

std::string platform_xml(const PlatformSpec& spec) {
  validate_platform_spec(spec);
  const int64_t N = spec.nodes;
  const int64_t G = spec.gpus_per_node;
  std::string out;
  out.reserve(size_t(N * G) * size_t(160 + 140 * G));

  out += "<?xml version='1.0'?>\n";
  out += "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n";
  out += "<!-- stepsim cluster: " + std::to_string(N) + " nodes x " + std::to_string(G) + " " + escape(spec.gpu_name) +
         ". Host speeds: pstate 0 = full FP8 rate, pstate 1 = rate while comm kernels hold SMs.\n"
         "     Routes: same node = nvl-a_UP, nvl-b_DOWN; across nodes = ib-a_UP, ib-b_DOWN (non-blocking fabric).\n"
         "     Load with network/model:CM02 and network/crosstraffic:0 for exact size/bandwidth times. -->\n";
  out += "<platform version=\"4.1\">\n";
  out += "  <zone id=\"cluster\" routing=\"Cluster\">\n";

  const std::string speeds = num(spec.gpu_flops) + "f," + num(spec.gpu_flops * spec.comm_speed_factor) + "f";
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) out += "    <host id=\"" + gpu_host_name(n, g) + "\" speed=\"" + speeds + "\"/>\n";

  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      if (G > 1) add_link(out, nvlink_link_name(n, g), spec.nvlink_Bps, spec.nvlink_latency_s / 2);
      add_link(out, ib_link_name(n, g), spec.ib_Bps, spec.ib_latency_s / 2);
    }

  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g) {
      const std::string ib = ib_link_name(n, g);
      out += "    <host_link id=\"" + gpu_host_name(n, g) + "\" up=\"" + ib + "_UP\" down=\"" + ib + "_DOWN\"/>\n";
    }

  for (int64_t n = 0; n < N; ++n)
    for (int64_t a = 0; a < G; ++a)
      for (int64_t b = 0; b < G; ++b) {
        out += "    <bypassRoute src=\"" + gpu_host_name(n, a) + "\" dst=\"" + gpu_host_name(n, b) + "\">";
        if (a == b)
          out += "<link_ctn id=\"__loopback__\"/>";
        else
          out += "<link_ctn id=\"" + nvlink_link_name(n, a) + "\" direction=\"UP\"/><link_ctn id=\"" +
                 nvlink_link_name(n, b) + "\" direction=\"DOWN\"/>";
        out += "</bypassRoute>\n";
      }

  out += "  </zone>\n</platform>\n";
  return out;
}

}  // namespace stepsim
