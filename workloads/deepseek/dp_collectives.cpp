#include "workloads/deepseek/dp_collectives.hpp"

#include <algorithm>

namespace stepsim {

RingFlows dp_ring_flows(const Plan& plan, const DpGroup& group, int64_t gpu, double non_expert_params,
                        double expert_params, double bytes_per_param) {
  RingFlows r;
  const int64_t g = plan.cluster.gpus_per_node;
  const int64_t i = gpu - group.first_gpu, n = group.size;
  const auto add = [&](int64_t next, int64_t prev, double bytes) {
    if (bytes <= 0) return;
    r.out.push_back({group.first_gpu + next, bytes});
    r.in.push_back({group.first_gpu + prev, bytes});
  };
  // Non-expert: IB ring over the group's nodes on this local rank's slice, NVLink ring in the node.
  const int64_t local_size = std::min(n, g), nodes = std::max<int64_t>(1, n / g);
  const int64_t node = i / local_size, local = i % local_size;
  if (nodes > 1)
    add(((node + 1) % nodes) * local_size + local, ((node + nodes - 1) % nodes) * local_size + local,
        non_expert_params / double(local_size) * (1.0 - 1.0 / double(nodes)) * bytes_per_param);
  if (local_size > 1)
    add(node * local_size + (local + 1) % local_size, node * local_size + (local + local_size - 1) % local_size,
        non_expert_params * (1.0 - 1.0 / double(local_size)) * bytes_per_param);
  // Experts: replicas of this GPU's experts sit one EP group apart.
  const int64_t ep = plan.parallel.ep, edp = n / ep;
  if (edp > 1 && expert_params > 0)
    add((i + ep) % n, (i + n - ep) % n, expert_params * (1.0 - 1.0 / double(edp)) * bytes_per_param);
  return r;
}

}  // namespace stepsim
