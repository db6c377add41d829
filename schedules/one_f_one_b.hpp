// 1F1B (PipeDream-flush / Megatron): rank r runs P-1-r warm-up forwards, then alternates one
// forward and one backward, then drains the remaining backwards. B includes W.
// Bubble (DeepSeek-V3 report, table 2): (PP-1)(F+B) on every rank.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class OneFOneB final : public Schedule {
 public:
  explicit OneFOneB(const ScheduleShape& shape) : Schedule(shape.ranks, shape.microbatches) {}
  const char* name() const override { return "1f1b"; }
  int32_t chunks_per_rank() const override { return 1; }
  int64_t stage_of(int64_t rank, int32_t) const override { return rank; }
  StageLoc where(int64_t stage) const override { return {stage, 0}; }
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes& t) const override { return double(ranks() - 1) * (t.f_s + t.b_s); }
};

}  // namespace stepsim::sched
