#include "workloads/routing/routing_stats.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <numeric>
#include <random>

#include "vocabulary/rank_layout.hpp"

namespace stepsim {

int64_t ep_nodes(const Plan& plan) {
  return std::max<int64_t>(1, RankLayout(plan).ep() / plan.nvlink_ranks());  // NVLink domains, nodes by default
}

namespace {

// Most nodes one token can reach: its k experts, within the topk_group groups it may use.
int64_t node_limit(const Plan& plan) {
  const ModelConfig& m = plan.model;
  const int64_t nodes = ep_nodes(plan);
  // Groups are contiguous expert ranges, as nodes are; a group spans max(1, nodes / n_group) nodes.
  const int64_t nodes_per_group = std::max<int64_t>(1, nodes / m.n_group);
  return std::min({m.num_experts_per_tok, m.topk_group * nodes_per_group, nodes});
}

// Uniform double in [0, 1) from 53 random bits: identical on every platform for a given seed.
double unit(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

}  // namespace

RoutingStats uniform_routing(const Plan& plan) {
  RoutingStats s;
  s.ep_nodes = ep_nodes(plan);
  if (!plan.model.is_moe()) return s;
  const int64_t k = node_limit(plan);
  s.mean_nodes = double(k);
  s.remote_nodes = double(k) * (1.0 - 1.0 / double(s.ep_nodes));
  s.node_share.assign(size_t(k + 1), 0.0);
  s.node_share[size_t(k)] = 1.0;
  return s;
}

RoutingStats deepseek_routing(const Plan& plan) {
  const ModelConfig& m = plan.model;
  RoutingStats s;
  s.ep_nodes = ep_nodes(plan);
  if (!m.is_moe()) return s;
  const int64_t experts = m.n_routed_experts, groups = m.n_group;
  const int64_t per_group = experts / groups;
  const int64_t per_node = experts / s.ep_nodes;
  std::mt19937_64 rng(plan.scenario.seed);
  std::vector<double> score(static_cast<size_t>(experts));
  std::vector<std::pair<double, int64_t>> group_score(static_cast<size_t>(groups));
  std::vector<int64_t> candidates;
  std::vector<char> node_hit(static_cast<size_t>(s.ep_nodes));
  std::vector<int64_t> count(static_cast<size_t>(s.ep_nodes + 1), 0);
  double nodes_sum = 0;
  for (int64_t t = 0; t < plan.scenario.routing_samples; ++t) {
    for (auto& x : score) x = unit(rng);
    for (int64_t g = 0; g < groups; ++g) {
      // Group score = sum of its two best experts (one if the group has a single expert).
      double best = -1, second = 0;
      for (int64_t e = g * per_group; e < (g + 1) * per_group; ++e) {
        const double x = score[size_t(e)];
        if (x > best) { second = best; best = x; } else if (x > second) { second = x; }
      }
      group_score[size_t(g)] = {best + (per_group > 1 ? second : 0.0), g};
    }
    std::partial_sort(group_score.begin(), group_score.begin() + m.topk_group, group_score.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    candidates.clear();
    for (int64_t i = 0; i < m.topk_group; ++i)
      for (int64_t e = group_score[size_t(i)].second * per_group; e < (group_score[size_t(i)].second + 1) * per_group; ++e)
        candidates.push_back(e);
    std::partial_sort(candidates.begin(), candidates.begin() + m.num_experts_per_tok, candidates.end(),
                      [&](int64_t a, int64_t b) { return score[size_t(a)] > score[size_t(b)]; });
    std::fill(node_hit.begin(), node_hit.end(), 0);
    int64_t touched = 0;
    for (int64_t i = 0; i < m.num_experts_per_tok; ++i) {
      const auto node = size_t(candidates[size_t(i)] / per_node);
      if (!node_hit[node]) { node_hit[node] = 1; ++touched; }
    }
    ++count[size_t(touched)];
    nodes_sum += double(touched);
  }
  s.samples = plan.scenario.routing_samples;
  s.mean_nodes = nodes_sum / double(s.samples);
  // The token's own node is uniform over the group, so it is among the touched ones with
  // probability touched / nodes.
  s.remote_nodes = s.mean_nodes * (1.0 - 1.0 / double(s.ep_nodes));
  s.node_share.resize(count.size());
  for (size_t k = 0; k < count.size(); ++k) s.node_share[k] = double(count[k]) / double(s.samples);
  return s;
}

RoutingStats routing_stats(const Plan& plan) {
  if (plan.scenario.routing != Routing::DeepSeek) return uniform_routing(plan);
  // The Monte-Carlo is pure in these inputs; `simulate` needs it for the workload and again for the
  // roofline beside it, so keep the last answer instead of sampling twice.
  const ModelConfig& m = plan.model;
  const std::array<int64_t, 7> key = {m.n_routed_experts, m.n_group, m.topk_group, m.num_experts_per_tok,
                                      ep_nodes(plan), int64_t(plan.scenario.seed), plan.scenario.routing_samples};
  static std::optional<std::pair<std::array<int64_t, 7>, RoutingStats>> last;
  if (!last || last->first != key) last.emplace(key, deepseek_routing(plan));
  return last->second;
}

}  // namespace stepsim
