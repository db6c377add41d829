// DualPipe (DeepSeek-V3 report 3.2.1; deepseek-ai/DualPipe, dualpipe/dualpipe.py): bidirectional.
// The model is cut into P stages and every rank holds two of them, so the ranks hold two copies
// of the parameters: direction 0 feeds microbatches from rank 0 (rank r runs stage r), direction 1
// from rank P-1 (rank r runs its stage P-1-r); each direction carries half of the microbatches.
// Each half of the ranks runs DualPipeV's eight steps with P/2 ranks (rank min(r, P-1-r)); phase 0
// is the direction that reaches the rank first. Here chunk d is direction d and stage d*P + i is
// direction d's i-th stage (both directions' stage i run layer slot i).
// Bubble (DualPipe README): (PP/2-1)(F&B+B-3W); activations PP+1 chunks; parameters 2x.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class DualPipe final : public Schedule {
 public:
  explicit DualPipe(const ScheduleShape& shape) : Schedule(shape, {.name = "dualpipe", .defers_weight_gradients = true}) {}
  int32_t chunks_per_rank() const override { return 2; }
  int64_t stage_of(int64_t rank, int32_t chunk) const override {
    return chunk == 0 ? rank : ranks() + (ranks() - 1 - rank);
  }
  StageLoc where(int64_t stage) const override {
    return stage < ranks() ? StageLoc{stage, 0} : StageLoc{ranks() - 1 - (stage - ranks()), 1};
  }
  std::vector<ChunkOp> program(int64_t rank) const override;
  int64_t path_stages() const override { return ranks(); }
  int32_t parameter_copies() const override { return 2; }
  int64_t microbatches_per_chunk() const override { return microbatches() / 2; }
  double bubble_s(const ChunkTimes& t) const override {
    return double(ranks() / 2 - 1) * (t.fb_s + t.b_s - 3 * t.w_s);
  }
  void check_shape(const ScheduleShape& shape) const override;
};

}  // namespace stepsim::sched
