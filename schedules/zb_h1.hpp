// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024; DeepSeek-V3's "ZB1P"): 1F1B's
// order of forwards and input-gradient backwards, with every weight gradient W deferred and run
// where the rank would otherwise wait for its next F or B or would hold more than 1F1B's peak of
// PP microbatches, the rest at the end. The order is laid out once in unit time (F = B = W, B here
// the input gradient only), as the handcrafted schedule of the paper assumes.
// Bubble (DeepSeek-V3 report, table 2): (PP-1)(F+B-2W) with B the whole backward.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class ZbH1 final : public LinearSchedule {
 public:
  explicit ZbH1(const ScheduleShape& shape);
  std::vector<ChunkOp> program(int64_t rank) const override { return programs_[size_t(rank)]; }
  double bubble_s(const ChunkTimes& t) const override {
    return double(ranks() - 1) * (t.f_s + t.b_s - 2 * t.w_s);
  }

 private:
  std::vector<std::vector<ChunkOp>> programs_;
};

}  // namespace stepsim::sched
