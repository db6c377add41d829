// How many sequences each GPU processes in each microbatch. Pipeline plans split the global batch
// evenly over replicas (the validator insists). FSDP plans may not divide evenly (15360 sequences
// over 2048 GPUs is 7.5 each): as a real trainer does, some GPUs take one sequence more, spread
// evenly over the cluster, and every GPU runs the same number of microbatch rounds, because the
// per-microbatch collectives need all of them; a GPU short of sequences runs a lighter (or empty)
// last round.
#pragma once

#include <cstdint>

#include "vocabulary/plan.hpp"

namespace stepsim {

// Sequences data-parallel replica `replica` (0 .. dp-1) holds for the whole step.
int64_t replica_sequences(const Plan& plan, int64_t replica);

// Sequences of microbatch `mb` on that replica: the first (local % m) rounds take one more.
int64_t microbatch_sequences(const Plan& plan, int64_t replica, int64_t mb);

}  // namespace stepsim
