// The unit the engine replays: one op on one stream of one GPU. Kept small (tens of millions of
// them for a DeepSeek step): no strings, no per-op heap memory; dependencies and flows live in
// per-stream side arrays that are consumed in order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vocabulary/comm_classes.hpp"
#include "vocabulary/op_kinds.hpp"

namespace stepsim::ops {

inline constexpr uint16_t kNoIndex = 0xFFFF;

// Reporting label. For an F&B pair the forward half is (microbatch, chunk) and the backward half
// (microbatch2, chunk2); a model layer op inside an overlapped F&B pair names its partner chunk's
// (microbatch2, chunk2). Elsewhere microbatch2 is kNoIndex: nothing overlaps the op.
struct Tag {
  OpKind kind = OpKind::OtherCompute;
  Phase phase = Phase::None;
  uint8_t chunk = 0;
  uint8_t chunk2 = 0;
  uint8_t half = 0;  // parallel.split_lone_chunks: 1 or 2 for the microbatch's halves, else 0
  // parallel.tp_comm_overlap: which part of a TP block's compute the op is (1: the GEMM chunks beside
  // the ring-exchange all-gather, 2: the rest up to the first reduce-scatter split, 3: the GEMM splits
  // beside the other reduce-scatter splits); 0 = the whole block
  uint8_t piece = 0;
  // The engine's only question about what the op is: its row of kCommClassTable. OpSink fills it
  // from the kind (None for compute ops).
  CommClass comm_class = CommClass::None;
  uint16_t microbatch = kNoIndex;
  uint16_t microbatch2 = kNoIndex;
  uint16_t layer = kNoIndex;
};

// "Op `seq` (0-based, in stream order) of stream `stream` on GPU `gpu` has completed."
// Local dependencies point at another stream of the same GPU, remote ones at another GPU
// (a pure synchronisation: no data, no time).
struct OpRef {
  uint32_t gpu_stream = 0;  // gpu << 8 | stream
  uint32_t seq = 0;

  OpRef() = default;
  OpRef(uint32_t gpu, uint32_t stream, uint32_t seq_) : gpu_stream(gpu << 8 | stream), seq(seq_) {}
  uint32_t gpu() const { return gpu_stream >> 8; }
  uint32_t stream() const { return gpu_stream & 0xFF; }
};

// One transfer end. Outgoing: `peer` is the destination; incoming: the source (bytes unused).
// Transfers between two GPUs are matched first-in first-out per channel, and move once both
// ends' ops are running (both sides sit inside the communication kernel).
struct FlowSpec {
  double bytes = 0;
  uint32_t peer = 0;
  uint8_t channel = 0;
};

// How much compute an op holds; the sink turns it into FLOPs at the host's full (FP8) speed.
// Seconds means "this long at full speed": the SM tax of concurrent communication stretches it.
struct Work {
  enum class Unit : uint8_t { Fp8Flops, Bf16Flops, Seconds };
  Unit unit = Unit::Seconds;
  double amount = 0;
  static Work fp8(double flops) { return {Unit::Fp8Flops, flops}; }
  static Work bf16(double flops) { return {Unit::Bf16Flops, flops}; }
  static Work seconds(double s) { return {Unit::Seconds, s}; }
};

struct Op {
  // `comm` says which member holds the op's amount: a compute op's work in FLOPs at the host's
  // pstate-0 (FP8) speed, or a comm op's handshake in seconds before its flows start.
  union {
    double work_flops = 0;
    double setup_s;
  };
  Tag tag;
  uint16_t n_deps = 0;
  uint16_t n_out = 0;  // outgoing flows
  uint16_t n_in = 0;   // incoming flows
  bool comm = false;
};
// Tens of millions of ops are queued per replay: keep them at half a cache line.
static_assert(sizeof(Op) == 32, "Op grew: it is copied per op on the replay's hot path");

}  // namespace stepsim::ops
