// One SimGrid actor per GPU drives all of the GPU's streams: it starts each stream's ops as
// asynchronous activities (an Exec for compute, mailbox puts and gets for transfers) and handles
// their completions as they come. One actor per stream was tens of thousands of actors at 2048
// GPUs (and more than Linux's default memory mappings at 16,384), and SimGrid's cost per
// simulation call grows with the live actors.
#pragma once

#include "simulator/engine/engine_state.hpp"

namespace stepsim::engine {

// The body of GPU g's actor: returns when every stream has run to its end (or is stuck, which
// EngineState::check_finished then reports).
void run_gpu(EngineState& e, GpuState& g);

}  // namespace stepsim::engine
