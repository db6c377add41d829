// Megatron-Core's expert-parallel all-to-all overlap (--overlap-moe-expert-parallel-comm, its
// "combined 1F1B"): a linear or interleaved schedule's steady state runs each backward together
// with the forward that follows it, as one F&B op, so each chunk's compute hides the other's
// all-to-alls layer by layer as DualPipe's pairs do. A backward pairs with the next forward (never
// the forward before it, which on the last stage is the same microbatch and feeds it).
#pragma once

#include <vector>

#include "schedules/schedule.hpp"

namespace stepsim::sched {

std::vector<ChunkOp> pair_backward_with_next_forward(const std::vector<ChunkOp>& ops);

}  // namespace stepsim::sched
