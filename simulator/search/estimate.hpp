// The search's fast estimate of a plan's step, without a replay: the per-op cost model's compute
// of the busiest pipeline rank (workloads/cost/compute_breakdown: the same per-op costs the replay
// charges), the schedule's closed-form bubble over it, and the roofline's communication
// (simulator/roofline/) with what cannot hide: an expert all-to-all that no F&B pair or split
// chunk overlaps, communication beyond the compute, and Megatron's overlap options' closed forms.
// The static memory estimate (workloads/memory/) says whether the plan fits.
#pragma once

#include "vocabulary/plan.hpp"

namespace stepsim::search {

struct Estimate {
  double compute_s = 0;       // busiest pipeline rank, per-op cost model
  double bubble_s = 0;        // the schedule's closed-form share of compute
  double exposed_comm_s = 0;  // communication compute cannot cover
  double step_s = 0;          // compute + bubble + exposed
  double memory_bytes = 0;    // static estimate, busiest rank
  double capacity_bytes = 0;  // hardware.memory_GiB
  bool fits = false;
  double tokens_per_s_per_gpu = 0;
  double mfu = 0;
};

// The plan must be valid (load_plan checked it).
Estimate estimate_plan(const Plan& plan);

}  // namespace stepsim::search
