#include "simulator/report/expert_layout_report.hpp"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "vocabulary/rank_layout.hpp"

namespace stepsim {
namespace {

// The NVLink domains ("nodes") an EP group's GPUs sit on, in increasing order.
std::vector<int64_t> group_nodes(const Plan& plan, const std::vector<int64_t>& group) {
  const int64_t g = plan.nvlink_ranks();
  std::set<int64_t> nodes;
  for (const int64_t gpu : group) nodes.insert(gpu / g);
  return {nodes.begin(), nodes.end()};
}

std::string node_range(const std::vector<int64_t>& nodes) {
  if (nodes.size() == 1) return fmt::format("node {}", nodes.front());
  const bool consecutive = nodes.back() - nodes.front() + 1 == int64_t(nodes.size());
  if (consecutive) return fmt::format("nodes {}-{}", nodes.front(), nodes.back());
  return fmt::format("nodes {}", fmt::join(nodes, ", "));
}

}  // namespace

std::string expert_layout_summary(const Plan& plan) {
  if (!plan.model.is_moe()) return "";
  const RankLayout layout(plan);
  const std::vector<int64_t> nodes = group_nodes(plan, layout.ep_group(0));
  std::string capacity;
  if (plan.parallel.moe_capacity_factor > 0)
    capacity = fmt::format(", capacity {:g}{}", plan.parallel.moe_capacity_factor,
                           plan.parallel.moe_pad_to_capacity ? " padded" : " with drops");
  // parallel.moe_router_dtype fp32: the rate its backward GEMMs were priced at.
  const char* router = plan.parallel.moe_router_dtype == RouterDtype::FP32
                           ? ", router FP32 (its backward's GEMMs as TF32, half the BF16 rate)"
                           : "";
  const bool hybrid = plan.parallel.moe_dispatcher == MoeDispatcher::DeepEP &&
                      plan.parallel.moe_flex_backend == FlexBackend::HybridEP;
  const char* stash = plan.parallel.moe_paged_stash ? ", paged stash (saved tensors copied out and back)" : "";
  return fmt::format("EP {} ({} dispatcher{}), expert TP {}, {}{}{}{}: each EP group on {} node{} (GPU 0's: {})",
                     layout.ep(), to_string(plan.parallel.moe_dispatcher), hybrid ? " run by HybridEP" : "", layout.etp(),
                     plan.parallel.moe_grouped_gemm ? "grouped GEMMs" : "one GEMM per expert", capacity, router, stash,
                     nodes.size(), nodes.size() == 1 ? "" : "s", node_range(nodes));
}

std::string expert_layout_text(const Plan& plan) {
  return plan.model.is_moe() ? "experts: " + expert_layout_summary(plan) + "\n" : "";
}

nlohmann::json expert_layout_json(const Plan& plan) {
  if (!plan.model.is_moe()) return nullptr;
  const RankLayout layout(plan);
  nlohmann::json j;
  j["dispatcher"] = to_string(plan.parallel.moe_dispatcher);
  if (plan.parallel.moe_dispatcher == MoeDispatcher::DeepEP) j["flex_backend"] = to_string(plan.parallel.moe_flex_backend);
  j["ep"] = layout.ep();
  j["expert_tp"] = layout.etp();
  j["grouped_gemm"] = plan.parallel.moe_grouped_gemm;
  j["router_dtype"] = to_string(plan.parallel.moe_router_dtype);
  j["capacity_factor"] = plan.parallel.moe_capacity_factor;
  j["pad_to_capacity"] = plan.parallel.moe_pad_to_capacity;
  j["paged_stash"] = plan.parallel.moe_paged_stash;
  j["nodes_per_group"] = group_nodes(plan, layout.ep_group(0)).size();
  j["groups"] = nlohmann::json::array();
  // Every EP group once: the lowest GPU of each, rank by rank.
  for (int64_t rank = 0; rank < layout.pp(); ++rank)
    for (int64_t local = 0; local < layout.stage_gpus(); ++local) {
      const int64_t gpu = layout.first_gpu_of_rank(rank) + local;
      if (layout.first_of_ep_group(gpu) != gpu) continue;
      j["groups"].push_back({{"pipeline_rank", rank}, {"first_gpu", gpu}, {"nodes", group_nodes(plan, layout.ep_group(gpu))}});
    }
  return j;
}

}  // namespace stepsim
