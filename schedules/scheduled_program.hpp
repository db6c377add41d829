// The bridge every pipeline workload uses: walks one rank's schedule (its ordered chunk ops) and
// asks the workload to expand each chunk op into stream ops, one chunk op per emit_next call.
//
// An F&B chunk op arrives whole (forward half `op.fwd`, backward half `op.bwd`), so a model
// workload can interleave the two chunks' layers -- e.g. emit attention-F of layer i, then the
// dispatch all-to-all of layer i's backward on a comm stream while the next GEMM runs -- which is
// how one chunk's compute hides the other's all-to-all.
#pragma once

#include <utility>
#include <vector>

#include "schedules/schedule.hpp"
#include "vocabulary/workload.hpp"

namespace stepsim::sched {

class ScheduledGpuProgram : public ops::GpuProgram {
 public:
  explicit ScheduledGpuProgram(std::vector<ChunkOp> items) : items_(std::move(items)) {}

  bool emit_next(ops::OpSink& sink) final {
    if (!begun_) {
      begun_ = true;
      begin(sink);
      return true;
    }
    if (next_ < items_.size()) {
      const size_t i = next_++;
      expand(items_[i], i, sink);
      return true;
    }
    if (!finished_) {
      finished_ = true;
      finish(sink);
      return true;
    }
    return false;
  }

  const std::vector<ChunkOp>& items() const { return items_; }

 protected:
  virtual void begin(ops::OpSink&) {}  // before the first chunk op (e.g. a first parameter all-gather)
  // Emits the stream ops of chunk op `index` of this rank's schedule.
  virtual void expand(const ChunkOp& op, size_t index, ops::OpSink& sink) = 0;
  virtual void finish(ops::OpSink&) {}  // after the last (e.g. gradient reduce-scatter, optimizer)

 private:
  std::vector<ChunkOp> items_;
  size_t next_ = 0;
  bool begun_ = false;
  bool finished_ = false;
};

}  // namespace stepsim::sched
