// The eight steps DualPipe and DualPipeV share: for P ranks (DualPipe: half its ranks) and N
// microbatches per phase, the ops of rank r with chunk = phase (0: the V's or direction's first
// arm, 1: the other) and microbatches numbered per phase in issue order.
#pragma once

#include <cstdint>
#include <vector>

#include "schedules/schedule.hpp"

namespace stepsim::sched {

std::vector<ChunkOp> dualpipe_steps(int64_t P, int64_t r, int64_t N);

}  // namespace stepsim::sched
