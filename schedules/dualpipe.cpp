#include "schedules/dualpipe.hpp"

#include <algorithm>
#include <string>

#include "schedules/dualpipe_steps.hpp"

namespace stepsim::sched {

void DualPipe::check_shape(const ScheduleShape& shape) const {
  Schedule::check_shape(shape);
  if (shape.ranks % 2 != 0)
    throw ScheduleError("parallel.pp", "DualPipe runs microbatches from both ends and needs an even parallel.pp, got " +
                                           std::to_string(shape.ranks) + "; use dualpipev for an odd one");
  if (shape.microbatches % 2 != 0 || shape.microbatches < 2 * shape.ranks)
    throw ScheduleError("parallel.microbatches", "DualPipe needs an even number of microbatches, at least 2 x "
                                                 "parallel.pp = " + std::to_string(2 * shape.ranks) + ", got " +
                                                     std::to_string(shape.microbatches));
}

std::vector<ChunkOp> DualPipe::program(int64_t rank) const {
  const int64_t half_ranks = ranks() / 2, half_mb = microbatches() / 2;
  const bool first_half = rank < half_ranks;
  std::vector<ChunkOp> ops = dualpipe_steps(half_ranks, std::min(rank, ranks() - 1 - rank), half_mb);
  // Phase 0 is the direction that starts at this half's end rank.
  const auto to_direction = [&](ChunkRef& ref) {
    if (ref.mb < 0) return;
    ref.chunk = first_half ? ref.chunk : 1 - ref.chunk;
    ref.mb += int32_t(ref.chunk * half_mb);
  };
  for (ChunkOp& op : ops) {
    to_direction(op.fwd);
    to_direction(op.bwd);
  }
  return ops;
}

}  // namespace stepsim::sched
