// `stepsim platform --png FILE`: a picture of the cluster a config builds (platforms/topology.hpp):
// nodes and their GPUs, NVLink domains, the NICs' leaf switches (plain, or rail-optimised: one
// colour per rail), spines and, for DeepSeek's multi-plane fabric, one plane per NIC index; the
// oversubscription of the leaves' uplinks; and the faults of scenario.stragglers (slow GPUs, slow
// or dead NICs, slow or cut leaf-spine cables). Small clusters are drawn switch by switch; large
// ones as one representative of each kind with their counts and the totals.
#pragma once

#include <string>

#include "platforms/cluster_platform.hpp"

namespace stepsim::plot {

// Every node and switch is drawn (else the summary): at most 32 nodes and 64 leaf switches.
bool topology_drawn_in_full(const FabricShape& f);

// Throws ConfigError naming `path` when it cannot be written.
void write_topology_png(const PlatformSpec& spec, const std::string& title, const std::string& path);

}  // namespace stepsim::plot
