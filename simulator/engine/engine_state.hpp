// The engine's run-time state (internal to simulator/engine): per GPU its op queues, completion
// counters with their waiters, the SM-tax counter and the accounting of the compute stream's idle
// time. One actor per GPU drives all its streams (gpu_actor.cpp). SimGrid runs actors one at a
// time, so plain data needs no locking; but an actor may yield inside any SimGrid call (starting
// an activity, a pstate change), so no iteration over shared state may span one.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "simulator/engine/intervals.hpp"
#include "simulator/engine/memory_tracking.hpp"
#include "simulator/engine/perturbations.hpp"
#include "simulator/engine/sim_result.hpp"
#include "vocabulary/workload.hpp"

namespace stepsim::engine {

inline constexpr uint32_t kNoWatch = std::numeric_limits<uint32_t>::max();

// How far a communication stream that ran dry may pull the program ahead (ops buffered on the GPU)
// before it waits for the compute stream to catch up. The compute stream always pulls when dry.
inline constexpr size_t kLookaheadOps = 4096;

// An op taken off its queue, with its own copies of deps and flows: generation may reallocate the
// queue while the op waits.
struct FetchedOp {
  ops::Op op;
  uint32_t seq = 0;
  std::vector<ops::OpRef> deps;
  std::vector<ops::FlowSpec> flows;  // n_out outgoing, then n_in incoming
};

struct Waiter {
  uint32_t seq;     // wake when the stream has completed op `seq`
  uint32_t gpu;     // ... stream `stream` of GPU `gpu`
  uint32_t stream;
};

struct StreamState {
  uint32_t fetched = 0;  // ops taken off the queue
  uint32_t done = 0;     // ops completed (in order): op k is done iff k < done
  std::vector<Waiter> waiters;
  // While the compute stream idles on this comm stream's op watch_upto (or an earlier one), the
  // data-moving intervals of the ops completing here count as exposed communication.
  uint32_t watch_upto = kNoWatch;
  ops::Tag current;  // the op in progress (for deadlock reports)
  bool comm_active = false;  // a comm op of this stream has posted its flows
  double comm_start = 0;     // ... at this time
  bool starving = false;  // the stream is dry and waits for the compute stream to generate more
};

struct GpuState {
  uint32_t id = 0;
  simgrid::s4u::Host* host = nullptr;
  std::vector<ops::StreamQueue> queues;  // ops emitted, not yet fetched (what the program's sink writes)
  std::vector<StreamState> streams;
  std::unique_ptr<ops::GpuProgram> program;
  bool simulated = true;   // false: a mirrored GPU in a reduced replay (no program, no actors)
  bool record = false;     // record_spans and this GPU is one the trace wants
  bool fixed_speed = true; // no speed profile: only the SM-tax pstate changes the host's speed
  bool exhausted = false;  // the program has emitted everything
  int comm_in_flight = 0;  // comm ops running: > 0 means the SM tax applies
  double speed = 0;        // the host's speed now (FLOP/s), read from SimGrid at each pstate switch

  double last_end = 0;
  double compute_s = 0;
  double exposed_s = 0;
  IntervalUnion comm_busy[ops::kCommClasses];  // data-moving time by communication class
  // Comm ops (start, end) that ended after the compute stream's latest op: once the program is over
  // these are the collectives the step still waits for (its tail), exposed communication.
  double compute_end = 0;
  std::vector<Interval> comm_after_compute;
  bool watching = false;       // the compute stream is idle, waiting on its deps
  std::vector<Interval> watched;
  std::vector<Interval> watched_by_class[ops::kCommClasses];  // the same intervals, by CommClass
  double exposed_by_class[ops::kCommClasses] = {};          // exposed time per class (classes may overlap)
  double exposed_unpaired = 0;              // exposed while the waiting op had no F&B partner
  MemoryTrack memory;                       // when the workload has a memory model


  std::unordered_map<uint64_t, simgrid::s4u::Mailbox*> mailboxes;  // (src, dst, channel) -> mailbox

  // Waking the GPU's actor: streams with news (a dependency completed, ops were generated), and
  // for waits on other GPUs a doorbell: a suspended Exec (it takes no share of the host) that the
  // actor waits on alongside its activities, cancelled by whoever completes the awaited op.
  std::vector<uint32_t> ready;
  uint32_t remote_waits = 0;  // waiters this GPU has registered on other GPUs' streams
  bool blocked = false;       // the actor is inside its wait for events
  simgrid::s4u::ExecPtr doorbell;
};

class EngineState {
 public:
  EngineState(const ops::Workload& workload, const SimOptions& options);

  // Generates the next piece of g's program; the dry streams it fed (or that may pull further, or
  // that learn the program is over) go to g.ready.
  void generate_piece(GpuState& g);
  // Ops emitted but not yet taken, over all of g's streams.
  size_t buffered_ops(const GpuState& g) const;
  // Takes the next op of a stream whose queue is not empty.
  void take(GpuState& g, int stream, FetchedOp& out);
  bool is_done(const ops::OpRef& r) const;
  // Stream `stream` of GPU `g` waits for `r` (not done yet): it goes to g.ready when `r` completes.
  void add_waiter(const ops::OpRef& r, GpuState& g, int stream);
  // Marks the op done and wakes its waiters: on this GPU through g.ready, on others also by
  // ringing their doorbell (a SimGrid call: may let other actors run).
  void complete(GpuState& g, int stream, const FetchedOp& op, double start, double end);

  // Sets g's host to `pstate` (0: full speed, 1: the SM tax) and refreshes g.speed.
  void switch_pstate(GpuState& g, int pstate);
  void comm_started(GpuState& g, int stream, ops::CommClass c);
  // `moving`: the op's flow intervals, merged.
  void comm_finished(GpuState& g, int stream, ops::CommClass c, const std::vector<Interval>& moving);
  // A copy-engine op's end (no SMs were taken): its time joins the class's busy time.
  void copy_finished(GpuState& g, ops::CommClass c, const std::vector<Interval>& moving);
  simgrid::s4u::Mailbox* mailbox(GpuState& g, uint32_t src, uint32_t dst, uint8_t channel);

  // Records the first error and makes every GPU actor stop.
  void fail(const std::string& what);
  // Empty if every stream ran to its end; else a description of where it got stuck.
  std::string check_finished() const;

  const ops::Workload& workload;
  SimOptions options;
  double fp8_flops = 0, bf16_flops = 0;
  bool sm_tax = false;
  uint32_t sm_taxed_classes = ~0u;  // PlatformSpec::taxed_comm_classes
  bool taxes(ops::CommClass c) const { return sm_tax && (sm_taxed_classes >> unsigned(c) & 1u); }
  double t_start = 0;
  // SimGrid's clock, kept by its time-advance signal: read on every event, and Engine::get_clock()
  // was 4-5 % of the replay's instructions.
  double clock = 0;
  std::vector<GpuState> gpus;
  uint64_t activities = 0;
  uint64_t ops_done = 0;
  std::vector<Span> spans;
  const ops::MemoryModel* memory = nullptr;  // the workload's, or nullptr
  std::vector<MemorySample> memory_samples;
  std::vector<SpanEdge> span_edges;
  std::vector<IdleSpan> idle_spans;
  Perturbations perturb;  // jitter, waits by peer, NIC detours
  std::string error;
  // Compute ops that nobody waits on may complete lazily (gpu_actor.cpp, chain_end): only where
  // nothing can observe when they ended in between (local deps only, no perturbation, no trace).
  bool lazy_compute = false;
  bool stopping = false;  // an actor failed: the others stop at their next event

 private:
  void check_ref(const ops::OpRef& r) const;
};

}  // namespace stepsim::engine
