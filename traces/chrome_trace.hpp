// Chrome / Perfetto trace export of a simulated step. Layout: a process per node, a thread per
// GPU stream (the compute stream, then each communication stream named by what it carries), a
// complete ("X") event per op named by what it is, with layer, microbatch, chunk, phase, kind and
// FLOPs or bytes in its args; flow arrows from a transfer to the op (compute or transfer) that waited for it;
// the compute stream's idle time marked as "bubble" or "exposed: <kind>" events, exactly the
// split the report sums. Open the file in ui.perfetto.dev or chrome://tracing.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <vector>

#include "simulator/engine/sim_result.hpp"

namespace stepsim {

struct TraceOptions {
  int64_t gpus_per_node = 8;  // GPU g belongs to node g / gpus_per_node (its process)
  std::vector<int32_t> ranks;  // GPUs to write; empty: every GPU with recorded spans
  double window_begin_s = 0;   // events overlapping [begin, end] (seconds into the step) are written
  double window_end_s = std::numeric_limits<double>::infinity();
};

// Needs a result run with SimOptions::record_spans. Times are written in microseconds.
void write_chrome_trace(const SimResult& result, const TraceOptions& options, std::ostream& out);

// The name the trace gives a span ("F attn L12 mb3", "dispatch B L12 mb3", "zero-reducescatter").
std::string trace_event_name(const ops::Tag& tag);
// The args.kind of a span: gemm, attention, dispatch, combine, pp-send, zero-allgather, ...
const char* trace_kind(ops::OpKind kind);
// A communication stream's thread label, from a kind it carries: "ep all-to-all", "pp send", ...
const char* trace_stream_label(ops::OpKind kind);

}  // namespace stepsim
