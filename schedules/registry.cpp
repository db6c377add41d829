#include "schedules/registry.hpp"

#include "schedules/capture_schedule.hpp"
#include "schedules/dualpipe.hpp"
#include "schedules/dualpipev.hpp"
#include "schedules/fsdp_schedule.hpp"
#include "schedules/interleaved.hpp"
#include "schedules/one_f_one_b.hpp"
#include "schedules/zb_h1.hpp"
#include "schedules/zb_v.hpp"

namespace stepsim::sched {
namespace {

template <class S>
std::unique_ptr<Schedule> build(const ScheduleShape& shape) {
  return std::make_unique<S>(shape);
}

ScheduleShape shape_of(const Plan& plan) {
  return {plan.parallel.pp, plan.parallel.microbatches, plan.parallel.virtual_stages};
}

}  // namespace

const std::vector<ScheduleEntry>& schedule_registry() {
  static const std::vector<ScheduleEntry> table = {
      {"gpipe", build<GPipe>},
      {"1f1b", build<OneFOneB>},
      {"interleaved", build<Interleaved>},
      {"zb-h1", build<ZbH1>},
      {"zb-v", build<ZbV>},
      {"dualpipe", build<DualPipe>},
      {"dualpipev", build<DualPipeV>},
      {"fsdp", build<FsdpSchedule>},
      {"capture", build<CaptureSchedule>},
  };
  return table;
}

std::optional<stepsim::Schedule> schedule_named(std::string_view name) {
  for (const auto& e : schedule_registry())
    if (name == e.name) return stepsim::Schedule(e.name);
  return std::nullopt;
}

std::unique_ptr<Schedule> make_schedule(stepsim::Schedule kind, const ScheduleShape& shape) {
  for (const auto& e : schedule_registry())
    if (e.name == kind.name()) {
      auto s = e.make(shape);
      s->check_shape(shape);
      return s;
    }
  throw std::logic_error("schedule missing from the registry");
}

std::unique_ptr<Schedule> make_schedule(stepsim::Schedule kind, int64_t ranks, int64_t microbatches,
                                        int64_t virtual_stages) {
  return make_schedule(kind, ScheduleShape{ranks, microbatches, virtual_stages});
}

std::unique_ptr<Schedule> make_schedule(const Plan& plan) {
  // The plan-wide checks first: they name every key a schedule needs changed at once.
  auto s = make_unchecked_schedule(plan);
  s->check_plan(plan);
  s->check_shape(shape_of(plan));
  return s;
}

std::unique_ptr<Schedule> make_unchecked_schedule(const Plan& plan) {
  for (const auto& e : schedule_registry())
    if (e.name == plan.parallel.schedule.name()) return e.make(shape_of(plan));
  throw std::logic_error("schedule missing from the registry");
}

int64_t path_stages(const Plan& plan) { return make_unchecked_schedule(plan)->path_stages(); }

}  // namespace stepsim::sched
