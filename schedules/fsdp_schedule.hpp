// FSDP / plain data parallelism: no pipeline (one rank); each microbatch runs forward then
// backward, so nothing waits for another stage (no bubble). Parameters are sharded (ZeRO-3):
// the workload gathers them per layer and reduce-scatters the gradients.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class FsdpSchedule final : public LinearSchedule {
 public:
  explicit FsdpSchedule(const ScheduleShape& shape) : LinearSchedule(shape, {.name = "fsdp", .shards_parameters = true}) {}
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes&) const override { return 0; }
  void check_shape(const ScheduleShape& shape) const override;
  std::vector<NeededSetting> settings_needed(const Plan& plan) const override;
  void check_plan(const Plan& plan) const override;
};

}  // namespace stepsim::sched
