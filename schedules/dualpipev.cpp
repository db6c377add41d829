#include "schedules/dualpipev.hpp"

#include <string>

#include "schedules/dualpipe_steps.hpp"

namespace stepsim::sched {

void DualPipeV::check_shape(const ScheduleShape& shape) const {
  Schedule::check_shape(shape);
  if (shape.microbatches < 2 * shape.ranks)
    throw ScheduleError("parallel.microbatches", "DualPipeV needs at least 2 x parallel.pp = " +
                                                     std::to_string(2 * shape.ranks) + " microbatches, got " +
                                                     std::to_string(shape.microbatches));
}

std::vector<ChunkOp> DualPipeV::program(int64_t rank) const { return dualpipe_steps(ranks(), rank, microbatches()); }

}  // namespace stepsim::sched
