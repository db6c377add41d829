// GPipe (Huang et al. 2019; torch.distributed.pipelining ScheduleGPipe): every rank runs all its
// forwards, then all its backwards, both in microbatch order. B includes W.
// Bubble: (PP-1)(F+B) on every rank, like 1F1B, but all m microbatches stay in flight.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class GPipe final : public Schedule {
 public:
  explicit GPipe(const ScheduleShape& shape) : Schedule(shape.ranks, shape.microbatches) {}
  const char* name() const override { return "gpipe"; }
  int32_t chunks_per_rank() const override { return 1; }
  int64_t stage_of(int64_t rank, int32_t) const override { return rank; }
  StageLoc where(int64_t stage) const override { return {stage, 0}; }
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes& t) const override { return double(ranks() - 1) * (t.f_s + t.b_s); }
};

}  // namespace stepsim::sched
