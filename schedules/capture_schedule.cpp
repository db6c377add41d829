#include "schedules/capture_schedule.hpp"

#include <string>
#include <utility>

namespace stepsim::sched {
namespace {
constexpr const char* kTwoMicrobatches =
    "schedule capture overlaps the forward of one microbatch with the backward of another; set parallel.microbatches=2";
}  // namespace

void CaptureSchedule::check_shape(const ScheduleShape& shape) const {
  if (shape.ranks != 1) throw ScheduleError("parallel.pp", "schedule capture runs one pipeline rank; set parallel.pp=1");
  if (shape.microbatches != 2)
    throw ScheduleError("parallel.microbatches", kTwoMicrobatches);
  Schedule::check_shape(shape);
}

std::vector<NeededSetting> CaptureSchedule::settings_needed(const Plan& plan) const {
  std::vector<NeededSetting> needed;
  if (plan.parallel.pp != 1)
    needed.push_back({"parallel.pp", "1", "schedule capture runs one pipeline rank; set parallel.pp=1"});
  if (plan.parallel.microbatches != 2) needed.push_back({"parallel.microbatches", "2", kTwoMicrobatches});
  for (const auto& [key, size] : {std::pair{"parallel.tp", plan.parallel.tp}, std::pair{"parallel.cp", plan.parallel.cp}})
    if (size != 1)
      needed.push_back({key, "1", std::string("schedule capture replays DeepSeek's EP-only trace; set ") + key + "=1"});
  if (plan.parallel.zero != 1)
    needed.push_back({"parallel.zero", "1", "schedule capture has no data-parallel collectives; set parallel.zero=1"});
  for (NeededSetting& n : Schedule::settings_needed(plan))
    if (n.key != "parallel.zero") needed.push_back(std::move(n));
  return needed;
}

void CaptureSchedule::check_plan(const Plan& plan) const {
  Schedule::check_plan(plan);
  if (plan.workload.kind == WorkloadKind::Model && (!plan.model.is_moe() || plan.model.first_k_dense_replace != 0))
    throw ScheduleError("model.first_k_dense_replace",
                        "schedule capture pairs MoE layers; use an MoE model with first_k_dense_replace=0");
}

std::vector<ChunkOp> CaptureSchedule::program(int64_t) const {
  // The backward's activations are assumed saved by an earlier (uncaptured) forward.
  return {ChunkOp{Pass::FB, false, {1, 0}, {0, 0}}};
}

}  // namespace stepsim::sched
