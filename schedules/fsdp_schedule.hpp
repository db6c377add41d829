// FSDP / plain data parallelism: no pipeline (one rank); each microbatch runs forward then
// backward, so nothing waits for another stage (no bubble). Parameters are sharded (ZeRO-3):
// the workload gathers them per layer and reduce-scatters the gradients.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class FsdpSchedule final : public Schedule {
 public:
  explicit FsdpSchedule(const ScheduleShape& shape) : Schedule(shape.ranks, shape.microbatches) {}
  const char* name() const override { return "fsdp"; }
  int32_t chunks_per_rank() const override { return 1; }
  int64_t stage_of(int64_t rank, int32_t) const override { return rank; }
  StageLoc where(int64_t stage) const override { return {stage, 0}; }
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes&) const override { return 0; }
  bool shards_parameters() const override { return true; }
  void check_shape(const ScheduleShape& shape) const override;
  void check_plan(const Plan& plan) const override;
};

}  // namespace stepsim::sched
