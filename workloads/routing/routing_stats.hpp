// How many nodes a token's experts live on, which sets the InfiniBand copies of MoE dispatch and
// combine once tokens are deduplicated per node.
#pragma once

#include <cstdint>
#include <vector>

#include "vocabulary/plan.hpp"

namespace stepsim {

struct RoutingStats {
  int64_t ep_nodes = 1;             // nodes an EP group spans
  double mean_nodes = 0;            // nodes a token's experts touch
  double remote_nodes = 0;          // of those, nodes other than the token's own
  std::vector<double> node_share;   // node_share[k] = share of tokens touching k nodes
  int64_t samples = 0;              // Monte-Carlo tokens (0 = closed form)
};

// The seed's uniform model: each token touches exactly min(node limit, EP nodes) nodes, picked
// uniformly among the EP group's nodes (its own included), so remote = k (1 - 1 / nodes).
RoutingStats uniform_routing(const Plan& plan);

// DeepSeek-V3 group-limited routing with independent uniform affinities: the router keeps the
// topk_group groups whose two best experts score highest, then the top-k experts among them.
// Seeded and reproducible (scenario.seed, scenario.routing_samples).
RoutingStats deepseek_routing(const Plan& plan);

// The statistics the plan's scenario.routing asks for.
RoutingStats routing_stats(const Plan& plan);

// Nodes an EP group spans: EP / GPUs per node, at least 1.
int64_t ep_nodes(const Plan& plan);

}  // namespace stepsim
