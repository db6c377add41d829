#include "simulator/search/estimate.hpp"

#include <algorithm>

#include "schedules/registry.hpp"
#include "simulator/roofline/roofline.hpp"
#include "workloads/cost/compute_breakdown.hpp"
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
  e.step_s = e.compute_s + e.bubble_s + e.exposed_comm_s;
  const MemoryEstimate mem = estimate_memory(plan);
  e.memory_bytes = mem.total_bytes;
  e.capacity_bytes = mem.capacity_bytes;
  e.fits = mem.fits;
  e.tokens_per_s_per_gpu = r.tokens_per_step / e.step_s / double(plan.gpus());
  e.mfu = mfu(plan, r, e.step_s);
  return e;
}

}  // namespace stepsim::search
