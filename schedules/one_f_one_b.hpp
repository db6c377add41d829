// 1F1B (PipeDream-flush / Megatron): rank r runs P-1-r warm-up forwards, then alternates one
// forward and one backward, then drains the remaining backwards. B includes W.
// Bubble (DeepSeek-V3 report, table 2): (PP-1)(F+B) on every rank.
//
// GPipe (Huang et al. 2019; torch.distributed.pipelining ScheduleGPipe) is 1F1B whose warm-up
// runs every forward: all forwards, then all backwards, both in microbatch order. Same bubble,
// but all m microbatches stay in flight.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class OneFOneB : public LinearSchedule {
 public:
  explicit OneFOneB(const ScheduleShape& shape) : OneFOneB(shape, {.name = "1f1b"}, false) {}
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes& t) const override { return double(ranks() - 1) * (t.f_s + t.b_s); }

 protected:
  OneFOneB(const ScheduleShape& shape, const ScheduleTraits& traits, bool forwards_first)
      : LinearSchedule(shape, traits), forwards_first_(forwards_first) {}

 private:
  bool forwards_first_;  // GPipe: the warm-up is every microbatch
};

class GPipe final : public OneFOneB {
 public:
  explicit GPipe(const ScheduleShape& shape) : OneFOneB(shape, {.name = "gpipe"}, true) {}
};

}  // namespace stepsim::sched
