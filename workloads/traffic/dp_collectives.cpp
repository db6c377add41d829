#include "workloads/traffic/dp_collectives.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "vocabulary/dtype_bytes.hpp"
#include "vocabulary/model_params.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {

namespace {

size_t position(const std::vector<int64_t>& members, int64_t gpu) {
  return size_t(std::lower_bound(members.begin(), members.end(), gpu) - members.begin());
}

}  // namespace

RingFlows dp_ring_flows(const Plan& plan, const DpGroup& group, int64_t gpu, double non_expert_params,
                        double expert_params, double bytes_per_param) {
  RingFlows r;
  const auto add = [&](int64_t next, int64_t prev, double bytes) {
    if (bytes <= 0) return;
    r.out.push_back({next, bytes});
    r.in.push_back({prev, bytes});
  };
  // Non-expert: IB ring over the group's nodes among the members at this GPU's position inside
  // its node, NVLink ring among the members of the node. Members spread evenly over nodes.
  const std::vector<int64_t>& m = group.members;
  const int64_t g = plan.nvlink_ranks(), n = int64_t(m.size());  // GPUs that reach each other over NVLink
  if (n > 1) {
    const int64_t local_size = std::count_if(m.begin(), m.end(), [&](int64_t x) { return x / g == m.front() / g; });
    const int64_t nodes = n / local_size, i = int64_t(position(m, gpu));
    const int64_t node = i / local_size, local = i % local_size;
    const auto at = [&](int64_t nd, int64_t lc) { return m[size_t(nd * local_size + lc)]; };
    if (nodes > 1)
      add(at((node + 1) % nodes, local), at((node + nodes - 1) % nodes, local),
          non_expert_params / double(local_size) * (1.0 - 1.0 / double(nodes)) * bytes_per_param);
    if (local_size > 1)
      add(at(node, (local + 1) % local_size), at(node, (local + local_size - 1) % local_size),
          non_expert_params * (1.0 - 1.0 / double(local_size)) * bytes_per_param);
  }
  // Experts: one ring over the replicas of this GPU's experts.
  const std::vector<int64_t>& e = group.expert_members;
  const int64_t edp = int64_t(e.size());
  if (edp > 1 && expert_params > 0) {
    const size_t j = position(e, gpu);
    add(e[(j + 1) % size_t(edp)], e[(j + size_t(edp) - 1) % size_t(edp)],
        expert_params * (1.0 - 1.0 / double(edp)) * bytes_per_param);
  }
  return r;
}

DpBuckets dp_buckets(const std::vector<std::pair<double, double>>& items, double bucket_params,
                     const std::vector<std::pair<double, double>>& gathered) {
  DpBuckets out;
  double filled = 0;  // parameters in the open bucket
  bool open = false;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto [non_expert, expert] = items[i];
    const auto [non_expert_bytes, expert_bytes] =
        i < gathered.size() ? gathered[i] : std::pair{kBf16Bytes * non_expert, kBf16Bytes * expert};
    const double total = non_expert + expert;
    // The forward needs all of the item's buckets; they are gathered last bucket first, so the one
    // it waits for is the first it touches in backward order.
    double left = total;
    size_t first = out.buckets.size();
    do {
      if (!open || filled >= bucket_params) {
        out.buckets.push_back({});
        filled = 0;
        open = true;
      }
      const double take = std::min(left, bucket_params - filled);
      const double share = total > 0 ? take / total : 0.0;
      DpBucket& b = out.buckets.back();
      b.non_expert += non_expert * share;
      b.expert += expert * share;
      b.gathered_non_expert_bytes += non_expert_bytes * share;
      b.gathered_expert_bytes += expert_bytes * share;
      b.last_item = i;
      first = std::min(first, out.buckets.size() - 1);
      filled += take;
      left -= take;
    } while (left > 0);
    out.needed_by_item.push_back(first);
  }
  return out;
}

double dp_smallest_tensor_params(const Plan& plan) {
  const ModelConfig& m = plan.model;
  const ModelParams p = count_params(m);
  const double tp = double(RankLayout(plan).tp()), h = double(m.hidden_size);
  double smallest = std::numeric_limits<double>::infinity();
  const auto take = [&](double params) {
    if (params > 0) smallest = std::min(smallest, params);
  };
  const AttentionParams& a = p.attention;
  // MLA's projections are tensors of their own; standard attention fuses Q, K and V into one.
  const bool mla = a.kv_down > 0;
  for (const int64_t w : {a.q_down, a.kv_down, mla ? a.q_up : a.q_up + a.kv_up, mla ? a.kv_up : 0, a.out})
    take(double(w) / tp);
  if (p.dense_layers > 0) take(h * double(m.intermediate_size) / tp);
  if (p.moe_layers > 0) {
    take(double(p.router));
    take(h * double(m.moe_intermediate_size));
    take(h * double(m.shared_expert_intermediate_size > 0 ? m.shared_expert_intermediate_size
                                                          : m.n_shared_experts * m.moe_intermediate_size));
  }
  return std::isfinite(smallest) ? smallest : 1.0;
}

double ddp_bucket_params(const Plan& plan) {
  const double size = plan.parallel.ddp_bucket_size > 0 ? double(plan.parallel.ddp_bucket_size)
                                                        : std::max(40e6, 1e6 * double(plan.dp()));
  return std::max(size, dp_smallest_tensor_params(plan));
}

}  // namespace stepsim
