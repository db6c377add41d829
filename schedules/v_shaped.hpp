// The V placement DualPipeV and ZB-V share: P ranks hold 2P stages; rank r runs stage r as chunk 0
// (forward flows to rank r+1) and stage 2P-1-r as chunk 1 (forward flows to rank r-1), so the
// turn at rank P-1 stays on the rank. Schedules with this placement derive from it and add only
// their order and closed forms.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class VShapedSchedule : public Schedule {
 public:
  using Schedule::Schedule;
  int32_t chunks_per_rank() const final { return 2; }
  int64_t stage_of(int64_t rank, int32_t chunk) const final { return chunk == 0 ? rank : 2 * ranks() - 1 - rank; }
  StageLoc where(int64_t stage) const final {
    return stage < ranks() ? StageLoc{stage, 0} : StageLoc{2 * ranks() - 1 - stage, 1};
  }
  bool v_shape() const final { return true; }
};

}  // namespace stepsim::sched
