// The model workload's streams and transfer channels on every GPU, handed out by counters in the
// order below. A stream is a queue of ops run in order; two kinds of traffic get two streams when
// one must not wait behind the other. A transfer channel keeps two kinds of transfers between the
// same two GPUs from matching each other's ends.
#pragma once

#include <cstdint>
#include <vector>

namespace stepsim {

struct ModelStreams {
  // `pipeline_channels`: sched::pipeline_channels of the schedule (at least 4); `host_copies`: the
  // plan offloads activations (parallel.cpu_offload_layers), which takes one more stream.
  ModelStreams(int32_t pipeline_channels, bool host_copies);

  // Streams. 0 computes (the engine's convention). A pipeline transfer gets one stream per channel
  // (direction x sending chunk) on each side, so a receive that waits for its producer never
  // blocks sends or receives of other channels queued behind it (DualPipe posts them as
  // independent P2P ops). The ids are the trace's thread names ("s2 pp send"): a new stream is
  // taken last.
  int compute = 0;
  int ep = 0;                 // DeepEP dispatch / combine
  std::vector<int> pp_send;   // by pipeline channel (sched::pipeline_channel)
  std::vector<int> pp_recv;
  int dp_gather = 0;          // ZeRO / FSDP all-gathers
  int dp_reduce = 0;          // ZeRO / FSDP reduce-scatters, HSDP's all-reduce
  int tp = 0;                 // tensor-parallel all-gathers and reduce-scatters (plans with tp > 1)
  int cp = 0;                 // context-parallel K/V all-gathers and dK/dV reduce-scatters (cp > 1)
  int host_copy = -1;         // activation offloads and reloads on a copy engine (one stream, as TE's); -1 = none
  int count = 0;

  // Transfer channels.
  std::vector<uint8_t> pp_channel;  // by pipeline channel
  uint8_t ep_channel = 0, dp_gather_channel = 0, dp_reduce_channel = 0, tp_channel = 0, cp_channel = 0,
          dp_allreduce_channel = 0;
};

}  // namespace stepsim
