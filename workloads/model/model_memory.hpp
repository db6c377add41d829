// The model workload's memory: static bytes per pipeline rank (workloads/memory/state_bytes) and,
// per compute op, the activations it allocates or frees. A layer's activations of a microbatch are
// allocated when its forward attention starts and freed when its weight gradient (attention W, the
// last W op of a layer) ends, so zero-bubble deferral keeps them until the deferred W runs; the LM
// head's logits likewise from the head's forward to its weight gradient. An offloaded layer
// (parallel.cpu_offload_layers) leaves between the two as workloads/memory/activation_offload.hpp says.
#pragma once

#include <vector>

#include "vocabulary/memory_model.hpp"
#include "workloads/memory/activation_offload.hpp"

namespace stepsim {

class ModelWorkload;

class ModelMemory : public ops::MemoryModel {
 public:
  explicit ModelMemory(const ModelWorkload& workload);
  ops::StaticMemory static_memory(int64_t gpu) const override;
  int activation_events(int64_t gpu, const ops::Tag& tag, ops::ActivationEvent* out) const override;
  // What layer `layer` saves from its forward for its backward on `gpu` in `microbatch` (what an
  // offload copies).
  double saved_bytes(int64_t gpu, int64_t microbatch, int64_t layer) const;

 private:
  const ModelWorkload& w_;
  ActivationOffload offload_;
  std::vector<double> saved_per_seq_;      // per layer
  std::vector<double> recompute_per_seq_;  // per layer (parallel.recompute=full)
  double head_per_seq_ = 0;
  double head_w_per_seq_ = 0;  // the part of head_per_seq_ the head's weight gradient keeps
  std::vector<ops::StaticMemory> per_rank_;  // per pipeline rank (one for FSDP)
};

}  // namespace stepsim
