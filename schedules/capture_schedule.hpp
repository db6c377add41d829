// The scenario of DeepSeek's published profiler trace (deepseek-ai/profile-data train.json): one
// rank runs the forward of microbatch 1 overlapped with the backward of microbatch 0 on the same
// chunk of layers, as one F&B op, and nothing else: no LM head, no optimizer step. Used to compare
// with and calibrate from it.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class CaptureSchedule final : public LinearSchedule {
 public:
  explicit CaptureSchedule(const ScheduleShape& shape)
      : LinearSchedule(shape, {.name = "capture", .profile_capture = true}) {}
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes&) const override { return 0; }
  void check_shape(const ScheduleShape& shape) const override;
  std::vector<NeededSetting> settings_needed(const Plan& plan) const override;
  void check_plan(const Plan& plan) const override;
};

}  // namespace stepsim::sched
