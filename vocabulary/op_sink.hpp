// Where a GPU program writes its ops. One StreamQueue per stream holds the ops emitted but not yet
// run; the engine consumes them in order and drops the consumed prefix, so a lazily generated
// program only keeps its near future in memory.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "vocabulary/op.hpp"

namespace stepsim::ops {

inline constexpr int kComputeStream = 0;  // streams 1.. are communication streams

struct StreamQueue {
  std::vector<Op> ops;
  std::vector<OpRef> deps;      // op k's deps follow op k-1's
  std::vector<FlowSpec> flows;  // op k's outgoing flows, then its incoming ones
  size_t op_head = 0, dep_head = 0, flow_head = 0;  // first entries not yet consumed
  uint32_t emitted = 0;                             // ops ever emitted = seq of the next one

  bool empty() const { return op_head == ops.size(); }
  // Drops the consumed prefix once it dominates, keeping memory proportional to what is pending.
  void compact();
};

class OpSink {
 public:
  OpSink(uint32_t gpu, std::vector<StreamQueue>& streams, double fp8_flops_per_s, double bf16_flops_per_s)
      : gpu_(gpu), streams_(streams), fp8_(fp8_flops_per_s), bf16_(bf16_flops_per_s) {}

  uint32_t gpu() const { return gpu_; }
  int num_streams() const { return int(streams_.size()); }

  // A compute op on the compute stream, after all of `deps`.
  OpRef compute(const Tag& tag, Work work, std::span<const OpRef> deps = {});
  OpRef compute(const Tag& tag, Work work, std::initializer_list<OpRef> deps) {
    return compute(tag, work, std::span<const OpRef>(deps.begin(), deps.size()));
  }

  // A communication op on comm stream `stream` (>= 1): starts after `deps` and the stream's previous
  // op, completes when every outgoing and incoming flow is done. No flows = a pure sync point.
  // `setup_s`: the kernel's handshake (e.g. DeepEP's notify) before its flows start; it holds the
  // comm SMs like the transfer does. A copy-engine kind (ops::CommClassInfo::copy_engine) has no
  // flows and lasts `setup_s` on no SMs.
  OpRef comm(int stream, const Tag& tag, std::span<const FlowSpec> out, std::span<const FlowSpec> in,
             std::span<const OpRef> deps = {}, double setup_s = 0);
  OpRef comm(int stream, const Tag& tag, std::span<const FlowSpec> out, std::span<const FlowSpec> in,
             std::initializer_list<OpRef> deps, double setup_s = 0) {
    return comm(stream, tag, out, in, std::span<const OpRef>(deps.begin(), deps.size()), setup_s);
  }

  // The reference the next op emitted on `stream` of this GPU will have.
  OpRef next_ref(int stream) const { return OpRef(gpu_, uint32_t(stream), streams_[size_t(stream)].emitted); }

 private:
  StreamQueue& queue(int stream);
  static void add_deps(StreamQueue& q, Op& op, std::span<const OpRef> deps);

  uint32_t gpu_;
  std::vector<StreamQueue>& streams_;
  double fp8_, bf16_;
};

}  // namespace stepsim::ops
