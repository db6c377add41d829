// The scenario of DeepSeek's published profiler trace (deepseek-ai/profile-data train.json): one
// rank runs the forward of microbatch 1 overlapped with the backward of microbatch 0 on the same
// chunk of layers, as one F&B op, and nothing else: no LM head, no optimizer step. Used to compare
// with and calibrate from it.
#pragma once

#include "schedules/schedule.hpp"

namespace stepsim::sched {

class CaptureSchedule final : public Schedule {
 public:
  explicit CaptureSchedule(const ScheduleShape& shape) : Schedule(shape.ranks, shape.microbatches) {}
  const char* name() const override { return "capture"; }
  int32_t chunks_per_rank() const override { return 1; }
  int64_t stage_of(int64_t rank, int32_t) const override { return rank; }
  StageLoc where(int64_t stage) const override { return {stage, 0}; }
  std::vector<ChunkOp> program(int64_t rank) const override;
  double bubble_s(const ChunkTimes&) const override { return 0; }
  bool optimizer_step() const override { return false; }
  bool runs_lm_head() const override { return false; }
  bool is_profile_capture() const override { return true; }
  void check_shape(const ScheduleShape& shape) const override;
  void check_plan(const Plan& plan) const override;
};

}  // namespace stepsim::sched
