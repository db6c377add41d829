// FSDP / plain data parallelism: no pipeline (one rank); each microbatch runs forward then
// backward. Parameter gathering and gradient reduction are the workload's business.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class FsdpSchedule final : public Schedule {
 public:
  FsdpSchedule(int64_t ranks, int64_t microbatches);
  const char* name() const override { return "fsdp"; }
  int32_t chunks_per_rank() const override { return 1; }
  int64_t stage_of(int64_t rank, int32_t) const override { return rank; }
  StageLoc where(int64_t stage) const override { return {stage, 0}; }
  std::vector<ChunkOp> program(int64_t rank) const override;
};

}  // namespace stepsim::sched
