#include "schedules/capture_schedule.hpp"

#include <stdexcept>

namespace stepsim::sched {

CaptureSchedule::CaptureSchedule(int64_t ranks, int64_t microbatches) : Schedule(ranks, microbatches) {
  if (ranks != 1) throw std::invalid_argument("capture runs one pipeline rank");
  if (microbatches != 2) throw std::invalid_argument("capture overlaps two microbatches: it needs exactly 2");
}

std::vector<ChunkOp> CaptureSchedule::program(int64_t) const {
  // The backward's activations are assumed saved by an earlier (uncaptured) forward.
  return {ChunkOp{Pass::FB, false, {1, 0}, {0, 0}}};
}

}  // namespace stepsim::sched
