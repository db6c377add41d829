// DualPipeV (deepseek-ai/DualPipe, dualpipe/dualpipev.py): P ranks hold 2P stages in a V; rank r
// runs stage r (chunk 0, forward flows to rank r+1) and stage 2P-1-r (chunk 1, forward flows to
// rank r-1); the turn at rank P-1 (stage P-1 -> P) stays on the rank. The op order is the one of
// DualPipeV.step(): eight steps, F&B pairs in the middle, zero-bubble B/W splits at the ends.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class DualPipeV final : public Schedule {
 public:
  DualPipeV(int64_t ranks, int64_t microbatches);  // needs microbatches >= 2 * ranks
  const char* name() const override { return "dualpipev"; }
  int32_t chunks_per_rank() const override { return 2; }
  int64_t stage_of(int64_t rank, int32_t chunk) const override {
    return chunk == 0 ? rank : 2 * ranks() - 1 - rank;
  }
  StageLoc where(int64_t stage) const override {
    return stage < ranks() ? StageLoc{stage, 0} : StageLoc{2 * ranks() - 1 - stage, 1};
  }
  std::vector<ChunkOp> program(int64_t rank) const override;
};

}  // namespace stepsim::sched
