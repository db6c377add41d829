// Stragglers on the platform (scenario.stragglers): a slow GPU is its host's speed profile (a
// factor on top of the SM-tax pstate, so the two combine), a degraded NIC or NVLink its link's
// bandwidth profile, both piecewise constant in simulated time; a NIC that is down changes its
// GPU's routes to go over NVLink to a neighbour GPU and out through that GPU's NIC (PXN-style).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "platforms/cluster_platform.hpp"

namespace stepsim {

// (t_s, value) pairs, each value holding from its time on; empty = never changes.
using Timeline = std::vector<std::pair<double, double>>;

// Product of the clock factors acting on `gpu` at each moment (1 outside every window).
Timeline gpu_speed_factor(const PlatformSpec& spec, int64_t gpu);
// The NIC's (or NVLink port's) bandwidth in B/s: the lowest degraded value acting, else the base.
Timeline nic_bandwidth(const PlatformSpec& spec, int64_t gpu);
Timeline nvlink_bandwidth(const PlatformSpec& spec, int64_t gpu);
// The GPU's share of its leaf's uplinks in B/s (ib / oversubscription, scaled by the leaf's working
// uplink capacity while a leaf-spine cable is slow or down); empty when no cable of its leaf is.
Timeline uplink_bandwidth(const PlatformSpec& spec, int64_t gpu);

// Per GPU: -1, or the GPU (same node) whose NIC carries its inter-node traffic because its own is down.
std::vector<int64_t> nic_detours(const PlatformSpec& spec);

// SimGrid profile text ("date value" lines).
std::string profile_text(const Timeline& t);

}  // namespace stepsim
