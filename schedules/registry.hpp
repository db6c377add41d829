// The schedules stepsim knows: one line each (the name configs use, how to build it). The config
// loader's choices, to_string(Schedule) and every make_schedule come from this table, so adding a
// schedule is its file in schedules/ and its line here.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "schedules/schedule.hpp"

namespace stepsim::sched {

struct ScheduleEntry {
  const char* name;
  std::unique_ptr<Schedule> (*make)(const ScheduleShape&);
};

const std::vector<ScheduleEntry>& schedule_registry();
std::optional<stepsim::Schedule> schedule_named(std::string_view name);

// Builds and checks the shape (ranks, microbatches, virtual stages); throws ScheduleError.
std::unique_ptr<Schedule> make_schedule(stepsim::Schedule kind, const ScheduleShape& shape);
std::unique_ptr<Schedule> make_schedule(stepsim::Schedule kind, int64_t ranks, int64_t microbatches,
                                        int64_t virtual_stages = 0);
// The plan's schedule (plan.parallel.pp ranks), checked against the whole plan.
std::unique_ptr<Schedule> make_schedule(const Plan& plan);
// The same without checks, for questions a plan that is not yet valid may ask (its stage count).
std::unique_ptr<Schedule> make_unchecked_schedule(const Plan& plan);
// Slots of the plan's layer partition (its schedule's path_stages()): DualPipeV's 2 x pp, ...
int64_t path_stages(const Plan& plan);

}  // namespace stepsim::sched
