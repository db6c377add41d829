// ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 6; the handcrafted order
// of torch.distributed.pipelining's ScheduleZBVZeroBubble): P ranks hold 2P stages in a V as in
// DualPipeV (rank r: stage r as chunk 0, stage 2P-1-r as chunk 1); backwards are input gradients
// only and every W is a separate op. Rank r: warm-up of 2(P-r)-1 chunk-0 forwards, r pairs
// (F1, F0), P-r triples (F1, B1, W1); a steady state of (F0, B0, W0, F1, B1, W1); a cool-down of r
// pairs (B0, B1) and P-r pairs (B0, W0), then the rest of the Ws (chunk 1's, then chunk 0's).
// Built for F = B = W (B the input gradient), where it leaves no bubble beyond the fill:
// (PP/2-1)(F+B-2W) with PP = 2P stages and B the whole backward, i.e. (P-1)F.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class ZbV final : public VShapedSchedule {
 public:
  explicit ZbV(const ScheduleShape& shape)
      : VShapedSchedule(shape, {.name = "zb-v", .title = "ZB-V", .defers_weight_gradients = true}) {}
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes& t) const override;
};

}  // namespace stepsim::sched
