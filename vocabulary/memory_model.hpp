// What a workload tells the engine about memory: the bytes each GPU holds for the whole step
// (weights, gradients, optimizer state, persistent buffers) and, per compute op, which activations
// it allocates when it starts and frees when it ends. The engine adds these up along the replayed
// timeline, so the schedule decides the peak; it knows nothing of layers or policies.
#pragma once

#include <cstdint>

#include "vocabulary/op.hpp"

namespace stepsim::ops {

struct StaticMemory {
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double buffers_bytes = 0;  // communication buffers, FSDP gather staging
  double total() const { return weights_bytes + grads_bytes + optimizer_bytes + buffers_bytes; }
};

// One allocation or free. Allocations happen when the op starts, frees when it ends. An
// allocation of a key already live, or a free of a key not live, is ignored: an op split in parts
// (e.g. two half-microbatches) may name the same allocation twice.
struct ActivationEvent {
  bool allocate = true;
  bool recompute = false;  // the backward's recompute working set (else activations saved by forward)
  uint64_t key = 0;
  double bytes = 0;  // allocations only; a free returns what its allocation took
};

inline constexpr int kMaxActivationEvents = 4;

class MemoryModel {
 public:
  virtual ~MemoryModel() = default;
  virtual StaticMemory static_memory(int64_t gpu) const = 0;
  // Writes up to kMaxActivationEvents events of compute op `tag` on `gpu` into `out`; returns how
  // many. Called once per compute op: keep it O(1).
  virtual int activation_events(int64_t gpu, const Tag& tag, ActivationEvent* out) const = 0;
};

}  // namespace stepsim::ops
