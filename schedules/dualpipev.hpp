// DualPipeV (deepseek-ai/DualPipe, dualpipe/dualpipev.py): P ranks hold 2P stages in a V; rank r
// runs stage r (chunk 0, forward flows to rank r+1) and stage 2P-1-r (chunk 1, forward flows to
// rank r-1); the turn at rank P-1 (stage P-1 -> P) stays on the rank. The op order is the one of
// DualPipeV.step(): eight steps, F&B pairs in the middle, zero-bubble B/W splits at the ends.
// Bubble (DualPipe README, PP = 2P stages): (PP/2-1)(F&B+B-3W), exact on every rank when W = F.
#pragma once

#include "schedules/dualpipe_steps.hpp"
#include "schedules/schedule.hpp"

namespace stepsim::sched {

class DualPipeV final : public VShapedSchedule {
 public:
  explicit DualPipeV(const ScheduleShape& shape)
      : VShapedSchedule(shape, {.name = "dualpipev", .title = "DualPipeV", .defers_weight_gradients = true}) {}
  std::vector<ChunkOp> program(int64_t rank) const override { return dualpipe_steps(ranks(), rank, microbatches()); }
  double bubble_s(const ChunkTimes& t) const override {
    return double(ranks() - 1) * (t.fb_s + t.b_s - 3 * t.w_s);
  }
};

}  // namespace stepsim::sched
