// A pipeline schedule: which chunk ops (forward, backward, weight-gradient, overlapped
// forward&backward) each pipeline rank runs, and in which order. A schedule knows order and stage
// placement only: no times, no bytes, no links (the workload and the engine add those).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "simulator/config/plan.hpp"

namespace stepsim::sched {

// F: forward of one chunk. B: backward (input gradient; also the weight gradient unless
// zero_bubble defers it). W: a deferred weight gradient. FB: a forward and a backward chunk run
// together so that one's compute hides the other's communication (DualPipe's F&B).
enum class Pass : uint8_t { F, B, W, FB };

const char* to_string(Pass p);

// One microbatch on one of a rank's chunks (chunk 0, or 1 for the V-shaped schedules).
struct ChunkRef {
  int32_t mb = -1;
  int32_t chunk = 0;
};

struct ChunkOp {
  Pass pass = Pass::F;
  // B or the backward half of FB: only the input gradient; the W of `bwd` comes later as a W op.
  bool zero_bubble = false;
  ChunkRef fwd;  // F, and the forward half of FB
  ChunkRef bwd;  // B, W, and the backward half of FB

  bool has_forward() const { return pass == Pass::F || pass == Pass::FB; }
  bool has_backward() const { return pass == Pass::B || pass == Pass::FB; }
};

struct StageLoc {
  int64_t rank = 0;
  int32_t chunk = 0;
};

class Schedule {
 public:
  Schedule(int64_t ranks, int64_t microbatches) : ranks_(ranks), microbatches_(microbatches) {}
  virtual ~Schedule() = default;

  virtual const char* name() const = 0;
  virtual int32_t chunks_per_rank() const = 0;
  // Stage placement: stage s forwards to stage s + 1.
  virtual int64_t stage_of(int64_t rank, int32_t chunk) const = 0;
  virtual StageLoc where(int64_t stage) const = 0;
  // Rank `rank`'s chunk ops in execution order.
  virtual std::vector<ChunkOp> program(int64_t rank) const = 0;

  int64_t ranks() const { return ranks_; }
  int64_t microbatches() const { return microbatches_; }
  int64_t stages() const { return ranks_ * chunks_per_rank(); }

 private:
  int64_t ranks_;
  int64_t microbatches_;
};

// Throws std::invalid_argument where the schedule cannot run (e.g. DualPipeV with N < 2P).
std::unique_ptr<Schedule> make_schedule(stepsim::Schedule kind, int64_t ranks, int64_t microbatches);

}  // namespace stepsim::sched
