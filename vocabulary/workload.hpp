// What the engine replays: a workload hands out one lazily generated program per GPU of a platform
// (the runs floor pairs it with its PlatformSpec). The engine knows SimGrid, not models; workloads
// know models, not SimGrid.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "vocabulary/op_sink.hpp"
#include "vocabulary/memory_model.hpp"

namespace stepsim::ops {

// One GPU's ops, produced piece by piece (e.g. one schedule item at a time) as the engine needs
// them, so a step with tens of millions of ops never sits in memory at once.
class GpuProgram {
 public:
  virtual ~GpuProgram() = default;
  // Appends the next piece of ops (on any of the GPU's streams; a piece may be empty) and returns
  // true, or returns false when the program is over.
  virtual bool emit_next(OpSink& sink) = 0;
};

class Workload {
 public:
  virtual ~Workload() = default;
  virtual std::string name() const = 0;
  // GPU ids are the platform's (node * G + local).
  virtual double bf16_flops() const = 0;      // BF16 FLOP/s of one GPU; FP8 is the platform's gpu_flops
  virtual int num_streams() const = 0;        // per GPU: 0 computes, 1.. communicate
  virtual std::unique_ptr<GpuProgram> program(int64_t gpu) const = 0;
  // Reduced replays simulate a subset of the GPUs. A flow to or from a GPU outside it is mirrored:
  // it runs between the two hosts as soon as the simulated side's op starts, with the bytes the
  // op states, as if the absent GPU mirrored the simulated one (exact when they are symmetric).
  virtual bool simulated(int64_t /*gpu*/) const { return true; }
  virtual std::string mode() const { return "full"; }   // "full", or what was aggregated
  // "exact", or "fast: which flows were left out" (sim.fidelity).
  virtual std::string fidelity() const { return "exact"; }
  // Every dependency points at an op of the same GPU (no remote synchronisation): the engine may
  // then complete compute ops nobody waits on without waking their GPU's actor at their end.
  virtual bool local_deps_only() const { return false; }
  // Bytes per GPU along the step; nullptr: the workload does not model memory.
  virtual const MemoryModel* memory_model() const { return nullptr; }
};

}  // namespace stepsim::ops
