#include "schedules/capture_schedule.hpp"

#include <string>

#include "vocabulary/rank_layout.hpp"

namespace stepsim::sched {

void CaptureSchedule::check_shape(const ScheduleShape& shape) const {
  if (shape.ranks != 1) throw ScheduleError("parallel.pp", "schedule capture runs one pipeline rank; set parallel.pp=1");
  if (shape.microbatches != 2)
    throw ScheduleError("parallel.microbatches", "schedule capture overlaps the forward of one microbatch with the "
                                                 "backward of another; set parallel.microbatches=2");
  Schedule::check_shape(shape);
}

void CaptureSchedule::check_plan(const Plan& plan) const {
  const RankLayout layout(plan);
  if (layout.tp() > 1 || layout.cp() > 1) {
    const char* key = layout.tp() > 1 ? "parallel.tp" : "parallel.cp";
    throw ScheduleError(key, std::string("schedule capture replays DeepSeek's EP-only trace; set ") + key + "=1");
  }
  if (plan.parallel.zero != 1)
    throw ScheduleError("parallel.zero", "schedule capture has no data-parallel collectives; set parallel.zero=1");
  if (plan.workload.kind == WorkloadKind::Model && (!plan.model.is_moe() || plan.model.first_k_dense_replace != 0))
    throw ScheduleError("model.first_k_dense_replace",
                        "schedule capture pairs MoE layers; use an MoE model with first_k_dense_replace=0");
}

std::vector<ChunkOp> CaptureSchedule::program(int64_t) const {
  // The backward's activations are assumed saved by an earlier (uncaptured) forward.
  return {ChunkOp{Pass::FB, false, {1, 0}, {0, 0}}};
}

}  // namespace stepsim::sched
