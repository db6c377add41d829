#include "schedules/fsdp_schedule.hpp"

#include <stdexcept>

namespace stepsim::sched {

FsdpSchedule::FsdpSchedule(int64_t ranks, int64_t microbatches) : Schedule(ranks, microbatches) {
  if (ranks != 1) throw std::invalid_argument("fsdp has no pipeline: it needs exactly one pipeline rank");
  if (microbatches < 1) throw std::invalid_argument("fsdp needs at least one microbatch");
}

std::vector<ChunkOp> FsdpSchedule::program(int64_t) const {
  std::vector<ChunkOp> ops;
  ops.reserve(size_t(2 * microbatches()));
  for (int32_t mb = 0; mb < int32_t(microbatches()); ++mb) {
    ops.push_back({Pass::F, false, {mb, 0}, {}});
    ops.push_back({Pass::B, false, {}, {mb, 0}});
  }
  return ops;
}

}  // namespace stepsim::sched
