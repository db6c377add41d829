// The model workload's memory: static bytes per pipeline rank (workloads/memory/state_bytes) and,
// per compute op, the activations it allocates or frees. A layer's activations of a microbatch are
// allocated when its forward attention starts and freed when its weight gradient (attention W, the
// last W op of a layer) ends, so zero-bubble deferral keeps them until the deferred W runs; the LM
// head's logits likewise from the head's forward to its weight gradient.
#pragma once

#include <vector>

#include "vocabulary/memory_model.hpp"

namespace stepsim {

class ModelWorkload;

class ModelMemory : public ops::MemoryModel {
 public:
  explicit ModelMemory(const ModelWorkload& workload);
  ops::StaticMemory static_memory(int64_t gpu) const override;
  int activation_events(int64_t gpu, const ops::Tag& tag, ops::ActivationEvent* out) const override;

 private:
  const ModelWorkload& w_;
  std::vector<double> saved_per_seq_;      // per layer
  std::vector<double> recompute_per_seq_;  // per layer (parallel.recompute=full)
  double head_per_seq_ = 0;
  double head_w_per_seq_ = 0;  // the part of head_per_seq_ the head's weight gradient keeps
  std::vector<ops::StaticMemory> per_rank_;  // per pipeline rank (one for FSDP)
};

}  // namespace stepsim
