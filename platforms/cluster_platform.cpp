// The platform description shared by the C++ builder and the XML writer: the spec taken from a
// plan, its validation, the resource names, and the network model settings.
#include "platforms/cluster_platform.hpp"

#include "vocabulary/comm_classes.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include <simgrid/s4u/Engine.hpp>

namespace stepsim {

PlatformSpec platform_spec(const Plan& plan) {
  const HardwareConfig& hw = plan.hardware;
  if (hw.sms <= 0) throw std::invalid_argument("hardware.sms must be positive");
  PlatformSpec spec;
  spec.nodes = plan.cluster.nodes;
  spec.gpus_per_node = plan.cluster.gpus_per_node;
  spec.gpu_flops = hw.fp8_tflops * 1e12;
  spec.comm_speed_factor = double(hw.sms - plan.taxed_comm_sms()) / double(hw.sms);
  if (plan.sm_tax_ep_only()) spec.taxed_comm_classes = 1u << unsigned(ops::CommClass::Ep);
  spec.ib_Bps = hw.ib_GBps * 1e9;
  spec.nvlink_Bps = hw.nvlink_GBps * 1e9;
  spec.ib_latency_s = hw.ib_latency_s;
  spec.nvlink_latency_s = hw.nvlink_latency_s;
  spec.gpu_name = hw.name;
  spec.stragglers = plan.scenario.stragglers;
  spec.topology = plan.cluster.topology;
  spec.oversubscription = plan.cluster.oversubscription;
  spec.rail_optimized = plan.cluster.rail_optimized;
  spec.leaf_nics = plan.cluster.leaf_nics;
  spec.nvlink_ranks = plan.nvlink_ranks();
  return spec;
}

FabricShape PlatformSpec::shape() const {
  FabricShape f;
  f.nodes = nodes;
  f.gpus_per_node = gpus_per_node;
  f.nvlink_ranks = nvlink_ranks > 0 ? nvlink_ranks : gpus_per_node;
  f.topology = topology;
  f.oversubscription = oversubscription;
  f.rail_optimized = rail_optimized;
  f.leaf_nics = leaf_nics;
  return f;
}

std::string gpu_host_name(int64_t node, int64_t local) {
  std::string name = "n";
  name += std::to_string(node);
  name += 'g';
  name += std::to_string(local);
  return name;
}

std::string nvlink_link_name(int64_t node, int64_t local) { return "nvl-" + gpu_host_name(node, local); }

std::string ib_link_name(int64_t node, int64_t local) { return "ib-" + gpu_host_name(node, local); }

void validate_platform_spec(const PlatformSpec& spec) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("platform: " + what);
  };
  require(spec.nodes >= 1, "nodes must be at least 1 (got " + std::to_string(spec.nodes) + ")");
  require(spec.gpus_per_node >= 1, "gpus_per_node must be at least 1 (got " + std::to_string(spec.gpus_per_node) + ")");
  require(std::isfinite(spec.gpu_flops) && spec.gpu_flops > 0, "gpu_flops must be positive");
  require(std::isfinite(spec.comm_speed_factor) && spec.comm_speed_factor > 0 && spec.comm_speed_factor <= 1,
          "comm_speed_factor must be in (0, 1] (comm_sms must be below sms)");
  require(std::isfinite(spec.ib_Bps) && spec.ib_Bps > 0, "ib bandwidth must be positive");
  require(spec.shape().nvlink_ranks == 1 || (std::isfinite(spec.nvlink_Bps) && spec.nvlink_Bps > 0),
          "nvlink bandwidth must be positive when an NVLink domain has more than one GPU");
  require(std::isfinite(spec.oversubscription) && spec.oversubscription >= 1, "oversubscription must be >= 1");
  require(std::isfinite(spec.ib_latency_s) && spec.ib_latency_s >= 0, "ib latency must be >= 0");
  require(std::isfinite(spec.nvlink_latency_s) && spec.nvlink_latency_s >= 0, "nvlink latency must be >= 0");
  const std::string fabric = fabric_problem(spec.shape());
  require(fabric.empty(), fabric);
}

void configure_exact_network(simgrid::s4u::Engine& /*engine*/) {
  using simgrid::s4u::Engine;
  // CM02: time = latency + size / bandwidth, max-min fair sharing with no RTT weighting.
  Engine::set_config("network/model:CM02");
  Engine::set_config("network/latency-factor:1");
  Engine::set_config("network/bandwidth-factor:1");
  Engine::set_config("network/weight-S:0");
  // Without cross-traffic, the ACKs of a flow do not load the reverse direction: both halves of a
  // full-duplex link carry their own traffic independently.
  Engine::set_config("network/crosstraffic:0");
  // CM02 caps a flow at TCP-gamma / (2 * latency) (a TCP window); RDMA has no such window.
  Engine::set_config("network/TCP-gamma:1e30");
  // Latencies down to the nanosecond are modelled without a "smaller than surf/precision" warning.
  Engine::set_config("surf/precision:1e-9");
  Engine::set_config("network/optim:Lazy");
}

}  // namespace stepsim
