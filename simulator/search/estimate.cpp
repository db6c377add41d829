#include "simulator/search/estimate.hpp"

#include <algorithm>

#include "schedules/registry.hpp"
#include "simulator/roofline/roofline.hpp"
#include "workloads/cost/compute_breakdown.hpp"
#include "workloads/memory/activation_bytes.hpp"
#include "workloads/memory/activation_offload.hpp"
#include "workloads/memory/memory_estimate.hpp"

namespace stepsim::search {

Estimate estimate_plan(const Plan& plan) {
  Estimate e;
  const Roofline r = compute_roofline(plan);
  const auto schedule = sched::make_schedule(plan);
  // Ranks differ by their layers, the embedding and the head: the first, the last and, for the
  // V schedules' turn, the middle one bound the busiest.
  const int64_t ranks = schedule->shards_parameters() ? 1 : schedule->ranks();
  for (const int64_t rank : {int64_t(0), ranks / 2, ranks - 1})
    e.compute_s = std::max(e.compute_s, cost::compute_breakdown(plan, rank).step.total());
  e.bubble_s = schedule->bubble_share() * e.compute_s;
  // An expert all-to-all stays exposed unless something computes beside it: F&B pairs, DeepEP's
  // split lone chunks, or Megatron's all-to-all overlap.
  const ParallelConfig& par = plan.parallel;
  const bool ep_hidden = schedule->overlaps_pairs() || par.moe_overlap_ep_comm ||
                         (par.split_lone_chunks && par.moe_dispatcher == MoeDispatcher::DeepEP);
  const double ep_exposed = ep_hidden ? 0.0 : r.ep_comm_s;
  const double other_comm = r.comm_s - (ep_hidden ? 0.0 : r.ep_comm_s);
  e.exposed_comm_s = ep_exposed + std::max(0.0, other_comm - e.compute_s) + r.overlap.exposed_s;
  const MemoryEstimate mem = estimate_memory(plan);
  // Activation copies to host memory that outlast the compute before their deadline (one
  // microbatch at a time; a layer's forward a third of its share of the compute, its backward two).
  if (const ActivationOffload offload(plan); offload.on()) {
    const double per_layer_s = e.compute_s / double(par.microbatches) / double(plan.model.num_hidden_layers) / 3;
    const double saved_per_token = std::max(layer_activations(plan, false).saved_per_token,
                                            plan.model.is_moe() ? layer_activations(plan, true).saved_per_token : 0.0);
    const double copy_s = mem.microbatch_tokens * saved_per_token / (plan.hardware.host_link_GBps * 1e9);
    e.exposed_comm_s += double(par.microbatches) * offload.copy_wait_s(per_layer_s, 2 * per_layer_s, copy_s);
  }
  e.step_s = e.compute_s + e.bubble_s + e.exposed_comm_s;
  e.memory_bytes = mem.total_bytes;
  e.capacity_bytes = mem.capacity_bytes;
  e.fits = mem.fits;
  e.tokens_per_s_per_gpu = r.tokens_per_step / e.step_s / double(plan.gpus());
  e.mfu = mfu(plan, r, e.step_s);
  return e;
}

}  // namespace stepsim::search
