// The data a pipeline moves between stages: each forward sends its activations to the next stage,
// each backward sends its input gradient to the previous one. Workloads use this to place their
// pipeline sends and receives; nothing here knows bytes or times.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "schedules/schedule.hpp"

namespace stepsim::sched {

struct StageTransfer {
  int64_t peer_rank = 0;   // the producer (for an input) or the consumer (for an output)
  int64_t peer_stage = 0;
  int64_t stage = 0;       // this side's stage
  bool backward = false;   // a gradient (backward) rather than an activation (forward)
  int32_t mb = 0;
  int32_t sending_chunk = 0;
  // Transfers between two ranks are matched in order per channel; one channel per (direction,
  // sending chunk) keeps each channel in microbatch order on both ends.
  int32_t channel = 0;
};

// Channels a schedule's transfers use: 0 .. pipeline_channels(s)-1, forward ones first (at least
// two of each direction, so one- and two-chunk schedules number them alike).
inline int32_t pipeline_channels(const Schedule& s) { return 2 * std::max(2, s.chunks_per_rank()); }
inline int32_t pipeline_channel(const Schedule& s, bool backward, int32_t sending_chunk) {
  return (backward ? pipeline_channels(s) / 2 : 0) + sending_chunk;
}

// None at the first stage of the path.
std::optional<StageTransfer> forward_input(const Schedule& s, int64_t rank, ChunkRef ref);
// None at the last stage of the path (its output feeds the loss, on the same rank).
std::optional<StageTransfer> forward_output(const Schedule& s, int64_t rank, ChunkRef ref);
// None at the last stage (the gradient starts from the local loss).
std::optional<StageTransfer> backward_input(const Schedule& s, int64_t rank, ChunkRef ref);
// None at the first stage.
std::optional<StageTransfer> backward_output(const Schedule& s, int64_t rank, ChunkRef ref);

// Where the forward and the backward of each (stage, microbatch) run: the rank and the position
// of the chunk op in that rank's program (an F&B op holds one forward and one backward).
class ProducerIndex {
 public:
  struct Site {
    int64_t rank = -1;
    int64_t index = -1;
  };
  ProducerIndex(const Schedule& s, const std::vector<std::vector<ChunkOp>>& programs);
  Site forward(int64_t stage, int32_t mb) const { return fwd_[slot(stage, mb)]; }
  Site backward(int64_t stage, int32_t mb) const { return bwd_[slot(stage, mb)]; }

 private:
  size_t slot(int64_t stage, int32_t mb) const { return size_t(stage * microbatches_ + mb); }
  int64_t microbatches_;
  std::vector<Site> fwd_, bwd_;
};

}  // namespace stepsim::sched
