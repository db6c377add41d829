// The memory counter track of a Chrome / Perfetto trace: one counter ("ph":"C") per GPU, in its
// node's process, giving the bytes the GPU holds (weights, gradients, optimizer state, buffers and
// live activations) from each change on, in GB.
#pragma once

#include "simulator/engine/sim_result.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/trace_event_stream.hpp"

namespace stepsim {

// Writes the counters of the ranks and time window `options` selects (nothing when the result has
// no memory samples).
void write_memory_counters(const SimResult& result, const TraceOptions& options, TraceEventStream& events);

}  // namespace stepsim
