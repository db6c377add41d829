// What one simulated step produces. Per rank (GPU), the step splits exactly into
//   compute_s + exposed_comm_s + bubble_s == step_time_s
// where compute_s is the compute stream's busy time, exposed_comm_s the part of its idle time
// during which a communication kernel it waits for is running (a collective or all-to-all from
// its start, peers' lateness included; a pipeline transfer while its data moves), and bubble_s the
// rest of its idle time (waiting for another stage's compute or for the schedule, including the
// idle tail until the whole step ends). The bubble is that remainder, computed in one place
// (bubble_from_rest); the split then holds to within kSplitTolerance x step_time_s.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vocabulary/op.hpp"
#include "simulator/engine/progress.hpp"
#include "simulator/engine/replay_count.hpp"
#include "simulator/engine/straggler_result.hpp"

namespace stepsim {

struct SimOptions {
  bool quiet = false;         // no progress line on stderr
  bool record_spans = false;  // keep every op's (rank, stream, start, end, tag): memory grows per op
  std::vector<int32_t> span_ranks;  // record_spans: only these GPUs (empty: every simulated GPU)
  double jitter_sigma = 0;           // scenario.jitter_sigma: lognormal factor on every compute op
  uint64_t seed = 1;                 // scenario.seed, for the jitter draws
  // What check_replay_size counted (the progress line's basis); counted again when absent and
  // the progress line is shown.
  std::optional<engine::ReplayCount> counted;
  // Called about once a wall second while the replay runs, and once at its end, with what the
  // progress line says (shown or not: `quiet` governs only the line). Empty: none.
  engine::ProgressCallback progress;
};

// A GPU's memory at its peak over the step (all 0 when the workload has no memory model):
// static parts plus the activations live at that moment.
struct RankMemory {
  double peak_bytes = 0;
  double peak_t_s = 0;  // when the peak is first reached, seconds since the step began
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double buffers_bytes = 0;      // communication buffers, FSDP gather staging
  double activations_bytes = 0;  // saved by forwards for their backwards
  double recompute_bytes = 0;    // recompute working sets (parallel.recompute=full)
};

// Bytes a GPU holds from time t_s on (recorded with spans, for the trace's counter track).
struct MemorySample {
  int32_t rank = 0;
  double t_s = 0;
  double bytes = 0;
};

// compute_s and exposed_comm_s are sums over thousands of intervals, each rounded: a bubble of
// zero comes out as a residue of a few ulps either side (-5e-18 s). A remainder within this share
// of the step is rounding, not time, and a negative one is reported as 0.
inline constexpr double kSplitTolerance = 1e-9;

// The bubble: what the step leaves after compute and exposed communication, never negative.
inline double bubble_from_rest(double step_time_s, double compute_s, double exposed_comm_s) {
  const double rest = step_time_s - compute_s - exposed_comm_s;
  return rest < 0 && rest >= -kSplitTolerance * step_time_s ? 0.0 : rest;
}

struct RankResult {
  int64_t rank = 0;  // the GPU id
  double step_time_s = 0;
  double compute_s = 0;
  double exposed_comm_s = 0;
  double bubble_s = 0;
  // By communication class (vocabulary/comm_classes.hpp), e.g. comm_s[CommClass::Ep]:
  // the data-moving time of this GPU's transfers: the union over the class's ops of their flows'
  // intervals (from both ends joining to the end); a time two classes share counts in both.
  ops::PerCommClass comm_s;
  // Exposed communication by what the compute stream waited for (a wait on two classes at once
  // counts in both; the class that reports the tail also holds the trailing collectives), and the
  // part of the classes that report it spent outside overlapped F&B pairs (warm-up, cool-down,
  // lone chunks), where nothing else could hide the transfer.
  ops::PerCommClass exposed_s;
  double exposed_unpaired_s = 0;
  RankMemory memory;
};

struct Span {
  int32_t rank = 0;
  uint8_t stream = 0;  // 0 = compute
  double start_s = 0;
  double end_s = 0;
  ops::Tag tag;
  uint32_t seq = 0;      // the op's index on its stream (flow arrows refer to it)
  double flops = 0;      // compute: work in FLOPs at the FP8 rate (BF16 work counts double)
  double bytes_out = 0;  // comm: bytes this GPU sends
  double bytes_in = 0;   // comm: bytes it receives
};

// An op that waited for a communication op on another stream of its GPU (a transfer and the task
// it unblocks): the flow arrow of a trace.
struct SpanEdge {
  int32_t rank = 0;
  uint8_t from_stream = 0;
  uint8_t to_stream = 0;
  uint32_t from_seq = 0;
  uint32_t to_seq = 0;
};

// Compute-stream idle time, split as RankResult splits it: exposed_classes == 0 is bubble, else
// the bitmask (bit c for class c of kCommClassTable) of the classes the compute stream waited on.
struct IdleSpan {
  int32_t rank = 0;
  uint8_t exposed_classes = 0;
  double start_s = 0;
  double end_s = 0;
};

struct SimResult {
  std::string workload;
  std::string schedule;
  std::string mode;  // "full", or what the workload aggregated
  std::string fidelity = "exact";  // "exact", or "fast: what the workload left out"
  double step_time_s = 0;  // end of the whole step: the last op on any rank
  std::vector<RankResult> ranks;
  // The most loaded rank: the one with the largest compute_s + exposed_comm_s (the least bubble),
  // lowest id on ties, and its data-moving time by communication class.
  int64_t critical_rank = 0;
  ops::PerCommClass comm_s;
  uint64_t activities = 0;  // SimGrid activities started: Execs + transfers
  uint64_t ops = 0;         // ops replayed
  double wall_s = 0;
  bool has_spans = false;
  std::vector<Span> spans;
  bool has_memory = false;  // the workload tracked memory (RankResult::memory is filled)
  std::vector<MemorySample> memory_samples;  // with spans only
  std::vector<SpanEdge> span_edges;
  std::vector<IdleSpan> idle_spans;
  StragglerReport stragglers;  // who waited for whom; NIC detours; the unperturbed baseline

  // The critical rank's row (null when no rank was replayed).
  const RankResult* critical() const {
    for (const RankResult& r : ranks)
      if (r.rank == critical_rank) return &r;
    return nullptr;
  }
};

}  // namespace stepsim
