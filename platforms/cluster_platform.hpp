// The SimGrid platform of a GPU cluster: N nodes of G GPUs, NVLink inside a node, one split-duplex
// InfiniBand NIC per GPU into a non-blocking fabric. Built in C++ for simulation (fast) and written
// as XML for users and other SimGrid tools; both come from this one description.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platforms/topology.hpp"
#include "vocabulary/plan.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
}  // namespace simgrid::s4u

namespace stepsim {

struct PlatformSpec {
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  double gpu_flops = 0;          // host speed = achievable FP8 FLOP/s (BF16 work is scaled by the caller)
  double comm_speed_factor = 1;  // second pstate while comm kernels hold SMs: (sms - comm_sms) / sms
  // Which communication classes' kernels hold those SMs (bit c = 1 << CommClass c): every class for
  // the GPU's hardware.comm_sms, the EP all-to-all alone for a release's DeepEP SMs.
  uint32_t taxed_comm_classes = ~0u;
  double ib_Bps = 0;             // per NIC, per direction
  double nvlink_Bps = 0;         // per GPU, per direction
  // End-to-end latency of one GPU-to-GPU transfer over that network. A route crosses two link
  // halves (the sender's _UP, the receiver's _DOWN), so each half carries half of it.
  double ib_latency_s = 0;
  double nvlink_latency_s = 0;
  std::string gpu_name = "H800";
  // The network between NICs and the NVLink domains (platforms/topology.hpp).
  Topology topology = Topology::Star;
  double oversubscription = 1;
  bool rail_optimized = false;
  int64_t leaf_nics = 32;
  int64_t nvlink_ranks = 0;  // consecutive GPUs sharing NVLink; 0 = a node
  FabricShape shape() const;
  // Slow GPUs, NICs, NVLinks and NICs down (platforms/degraded_hardware.hpp); ids are this platform's.
  std::vector<Straggler> stragglers;
};

PlatformSpec platform_spec(const Plan& plan);

// Names are stable and documented: hosts "n<node>g<local>", links "nvl-n<node>g<local>" and
// "ib-n<node>g<local>" (each with _UP / _DOWN halves); on a fat tree also "up-n<node>g<local>" and
// "spine-z<zone>" (platforms/topology.hpp).
std::string gpu_host_name(int64_t node, int64_t local);
std::string nvlink_link_name(int64_t node, int64_t local);  // "nvl-n<node>g<local>"
std::string ib_link_name(int64_t node, int64_t local);      // "ib-n<node>g<local>"

// Throws std::invalid_argument when the spec cannot make a platform (no GPUs, non-positive rates,
// negative latencies, a comm_speed_factor outside (0, 1]).
void validate_platform_spec(const PlatformSpec& spec);

// Builds the platform inside `engine` (before any actor starts) and returns the GPU hosts indexed
// by global GPU id (node * gpus_per_node + local). Throws std::invalid_argument for a bad spec and
// std::logic_error when the engine already has a platform.
std::vector<simgrid::s4u::Host*> build_platform(simgrid::s4u::Engine& engine, const PlatformSpec& spec);

// The same platform as a SimGrid XML document (DTD 4.1): the same host names, pstates, links and
// routes (3.32's XML has no Star routing, so it is written as one Cluster-routed zone with the IB
// NICs as host links plus bypass routes over NVLink inside each node; see platform_xml.cpp).
std::string platform_xml(const PlatformSpec& spec);

// Network model settings that give exact bandwidth-delay times (CM02 with latency/bandwidth factors
// 1, no cross-traffic penalty, no TCP-window cap, surf/precision 1e-9 so sub-us latencies neither
// warn nor round, network/optim Lazy): call after the Engine exists and before the platform is built.
void configure_exact_network(simgrid::s4u::Engine& engine);

}  // namespace stepsim
