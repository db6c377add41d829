// Per-GPU memory along the replay: static bytes plus the live activations of the compute ops that
// have run, with the peak and its breakdown. Driven from EngineState::complete for compute ops.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "vocabulary/memory_model.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim::engine {

struct MemoryTrack {
  ops::StaticMemory fixed;
  double saved_bytes = 0;      // activations saved by forwards, not yet freed
  double recompute_bytes = 0;  // recompute working sets live
  std::unordered_map<uint64_t, double> live;  // allocation key -> bytes
  RankMemory peak;
};

// Sets the GPU's static bytes and its starting point (the peak before any op runs).
void start_memory(MemoryTrack& m, const ops::StaticMemory& fixed);

// Applies compute op `tag`'s allocations at `start_s` and its frees at `end_s` (seconds since the
// step began). Appends a sample per change to `samples` when it is not null.
void track_memory(MemoryTrack& m, const ops::MemoryModel& model, int64_t gpu, const ops::Tag& tag, double start_s,
                  double end_s, std::vector<MemorySample>* samples);

}  // namespace stepsim::engine
