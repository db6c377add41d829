#include "schedules/schedule.hpp"

#include "schedules/capture_schedule.hpp"
#include "schedules/dualpipev.hpp"
#include "schedules/fsdp_schedule.hpp"
#include "schedules/one_f_one_b.hpp"

#include <stdexcept>

namespace stepsim::sched {

const char* to_string(Pass p) {
  switch (p) {
    case Pass::F: return "F";
    case Pass::B: return "B";
    case Pass::W: return "W";
    case Pass::FB: return "F&B";
  }
  return "?";
}

std::unique_ptr<Schedule> make_schedule(stepsim::Schedule kind, int64_t ranks, int64_t microbatches) {
  switch (kind) {
    case stepsim::Schedule::OneFOneB: return std::make_unique<OneFOneB>(ranks, microbatches);
    case stepsim::Schedule::DualPipeV: return std::make_unique<DualPipeV>(ranks, microbatches);
    case stepsim::Schedule::Fsdp: return std::make_unique<FsdpSchedule>(ranks, microbatches);
    case stepsim::Schedule::Capture: return std::make_unique<CaptureSchedule>(ranks, microbatches);
  }
  throw std::invalid_argument("unknown schedule");
}

}  // namespace stepsim::sched
