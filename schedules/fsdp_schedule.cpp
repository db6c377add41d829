#include "schedules/fsdp_schedule.hpp"

#include <string>

namespace stepsim::sched {

void FsdpSchedule::check_shape(const ScheduleShape& shape) const {
  if (shape.ranks != 1)
    throw ScheduleError("parallel.pp", "schedule fsdp runs without pipeline parallelism; set parallel.pp=1");
  Schedule::check_shape(shape);
}

std::vector<NeededSetting> FsdpSchedule::settings_needed(const Plan& plan) const {
  std::vector<NeededSetting> needed = Schedule::settings_needed(plan);
  // Everything fsdp needs in one message, so one retry fixes it.
  const int64_t pp = plan.parallel.pp, zero = plan.parallel.zero;
  const std::string message = "schedule fsdp runs without pipeline parallelism and shards parameters (ZeRO-3): set " +
                              std::string(pp != 1 ? "parallel.pp=1" : "") + (pp != 1 && zero != 3 ? " and " : "") +
                              (zero != 3 ? "parallel.zero=3" : "") + " (now parallel.pp=" + std::to_string(pp) +
                              ", parallel.zero=" + std::to_string(zero) + ")";
  if (zero != 3) needed.insert(needed.begin(), {"parallel.zero", "3", message});
  if (pp != 1) needed.insert(needed.begin(), {"parallel.pp", "1", message});
  return needed;
}

void FsdpSchedule::check_plan(const Plan& plan) const {
  if (plan.workload.kind == WorkloadKind::Synthetic)
    throw ScheduleError("schedule", "the synthetic workload studies pipeline schedules; pick one with a pipeline");
  Schedule::check_plan(plan);
}

std::vector<ChunkOp> FsdpSchedule::program(int64_t) const {
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(2 * microbatches()));
  for (int32_t mb = 0; mb < int32_t(microbatches()); ++mb) {
    ops.push_back({Pass::F, false, {mb, 0}, {}});
    ops.push_back({Pass::B, false, {}, {mb, 0}});
  }
  return ops;
}

}  // namespace stepsim::sched
