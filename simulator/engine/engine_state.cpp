#include "simulator/engine/engine_state.hpp"
#include "simulator/engine/span_recording.hpp"

#include <algorithm>
#include <stdexcept>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

namespace stepsim::engine {

using namespace stepsim::ops;

namespace sg4 = simgrid::s4u;

EngineState::EngineState(const Workload& w, const SimOptions& opt) : workload(w), options(opt) {}

size_t EngineState::buffered_ops(const GpuState& g) const {
  size_t n = 0;
  for (const StreamQueue& q : g.queues) n += q.ops.size() - q.op_head;
  return n;
}

void EngineState::generate_piece(GpuState& g) {
  OpSink sink(g.id, g.queues, fp8_flops, bf16_flops);
  if (!g.program->emit_next(sink)) g.exhausted = true;
  // Wake the dry streams this piece fed (or that may pull further themselves, or that learn the
  // program is over).
  const bool may_pull = buffered_ops(g) < kLookaheadOps;
  for (size_t s = 0; s < g.streams.size(); ++s) {
    StreamState& st = g.streams[s];
    if (st.starving && (g.exhausted || may_pull || !g.queues[s].empty())) {
      st.starving = false;
      g.ready.push_back(uint32_t(s));
    }
  }
}

void EngineState::take(GpuState& g, int stream, FetchedOp& out) {
  StreamQueue& q = g.queues[size_t(stream)];
  out.op = q.ops[q.op_head++];
  out.deps.assign(q.deps.begin() + std::ptrdiff_t(q.dep_head),
                  q.deps.begin() + std::ptrdiff_t(q.dep_head + out.op.n_deps));
  q.dep_head += out.op.n_deps;
  const size_t nflows = size_t(out.op.n_out) + out.op.n_in;
  out.flows.assign(q.flows.begin() + std::ptrdiff_t(q.flow_head),
                   q.flows.begin() + std::ptrdiff_t(q.flow_head + nflows));
  q.flow_head += nflows;
  q.compact();

  StreamState& st = g.streams[size_t(stream)];
  out.seq = st.fetched++;
  st.current = out.op.tag;
  for (const OpRef& r : out.deps) check_ref(r);
  for (size_t i = 0; i < nflows; ++i)
    if (out.flows[i].peer >= gpus.size())
      throw std::invalid_argument("flow to GPU " + std::to_string(out.flows[i].peer) + ", but the platform has " +
                                  std::to_string(gpus.size()));
}

void EngineState::check_ref(const OpRef& r) const {
  if (r.gpu() >= gpus.size() || r.stream() >= gpus[r.gpu()].streams.size())
    throw std::invalid_argument("dependency on GPU " + std::to_string(r.gpu()) + " stream " +
                                std::to_string(r.stream()) + ", which does not exist");
}

bool EngineState::is_done(const OpRef& r) const { return r.seq < gpus[r.gpu()].streams[r.stream()].done; }

void EngineState::add_waiter(const OpRef& r, GpuState& g, int stream) {
  if (lazy_compute && r.gpu() != g.id)  // the workload promised none: a lazy completion would miss this waiter
    throw std::logic_error("remote dependency in a workload that declares only local ones");
  gpus[r.gpu()].streams[r.stream()].waiters.push_back({r.seq, g.id, uint32_t(stream)});
  if (r.gpu() != g.id) ++g.remote_waits;
}

void EngineState::complete(GpuState& g, int stream, const FetchedOp& op, double start, double end) {
  StreamState& st = g.streams[size_t(stream)];
  st.done = op.seq + 1;
  g.last_end = std::max(g.last_end, end);
  if (stream == kComputeStream) {
    g.compute_end = end;
    std::erase_if(g.comm_after_compute, [end](const Interval& iv) { return iv.end <= end; });
  } else if (op.op.n_out + op.op.n_in > 0 && comm_class_info(size_t(op.op.tag.comm_class)).exposed_in_tail) {
    g.comm_after_compute.push_back({start, end});
  }
  if (stream == kComputeStream && memory != nullptr)
    track_memory(g.memory, *memory, g.id, op.op.tag, start - t_start, end - t_start, g.record ? &memory_samples : nullptr);
  ++ops_done;
  if (g.record) record_span(*this, g, stream, op, start, end);
  if (st.waiters.empty()) return;
  // Hand the waiters their news first, ring doorbells after: cancel() may let other actors run,
  // and they may register new waiters on this stream.
  std::vector<simgrid::s4u::ExecPtr> bells;
  for (size_t i = 0; i < st.waiters.size();) {
    const Waiter w = st.waiters[i];
    if (w.seq >= st.done) {
      ++i;
      continue;
    }
    st.waiters[i] = st.waiters.back();
    st.waiters.pop_back();
    GpuState& waiting = gpus[w.gpu];
    waiting.ready.push_back(w.stream);
    if (w.gpu == g.id) continue;
    --waiting.remote_waits;
    if (waiting.blocked && waiting.doorbell) bells.push_back(std::move(waiting.doorbell));
  }
  for (const auto& bell : bells) bell->cancel();
}

void EngineState::switch_pstate(GpuState& g, int pstate) {
  g.host->set_pstate(pstate);
  g.speed = g.host->get_speed();  // the actors read this copy
}

// The SM tax: while any comm kernel of a GPU runs, its compute runs on the remaining SMs (pstate 1);
// SimGrid re-rates the running Exec when the pstate changes.
void EngineState::comm_started(GpuState& g, int stream, CommClass c) {
  if (taxes(c) && g.comm_in_flight++ == 0) switch_pstate(g, 1);
  StreamState& st = g.streams[size_t(stream)];
  st.comm_active = true;
  st.comm_start = clock;
}

void EngineState::comm_finished(GpuState& g, int stream, CommClass c, const std::vector<Interval>& moving) {
  if (taxes(c) && --g.comm_in_flight == 0) switch_pstate(g, 0);
  g.streams[size_t(stream)].comm_active = false;
  copy_finished(g, c, moving);
}

void EngineState::copy_finished(GpuState& g, CommClass c, const std::vector<Interval>& moving) {
  // Flows start no earlier than their op: nothing still to come starts before the oldest op in flight.
  double horizon = clock;
  for (const StreamState& st : g.streams)
    if (st.comm_active) horizon = std::min(horizon, st.comm_start);
  IntervalUnion& busy = g.comm_busy[size_t(c)];
  busy.add(moving);
  busy.settle(horizon);
}

sg4::Mailbox* EngineState::mailbox(GpuState& g, uint32_t src, uint32_t dst, uint8_t channel) {
  const uint64_t key = uint64_t(src) << 40 | uint64_t(dst) << 16 | channel;
  auto it = g.mailboxes.find(key);
  if (it != g.mailboxes.end()) return it->second;
  std::string name = "m";
  name += std::to_string(src);
  name += '>';
  name += std::to_string(dst);
  name += ':';
  name += std::to_string(channel);
  sg4::Mailbox* mb = sg4::Mailbox::by_name(name);
  g.mailboxes.emplace(key, mb);
  return mb;
}

void EngineState::fail(const std::string& what) {
  if (error.empty()) error = what;
  // Not Actor::kill_all(): SimGrid 3.32 aborts the process when it kills an actor blocked in
  // Activity::wait_any. Each GPU actor stops at its next event; the rest deadlock, and the run
  // ends there (engine.cpp).
  stopping = true;
}

std::string EngineState::check_finished() const {
  std::string report;
  int listed = 0;
  uint64_t stuck = 0;
  for (const GpuState& g : gpus) {
    if (!g.simulated) continue;
    for (size_t s = 0; s < g.streams.size(); ++s) {
      const StreamState& st = g.streams[s];
      const bool finished = g.exhausted && g.queues[s].empty() && st.done == st.fetched;
      if (finished) continue;
      ++stuck;
      if (listed++ < 6) {
        report += "\n  GPU " + std::to_string(g.id) + " stream " + std::to_string(s) + ": ";
        if (st.done < st.fetched)
          report += std::string("blocked in op #") + std::to_string(st.done) + " (" + to_string(st.current.kind) +
                    " mb " + std::to_string(st.current.microbatch) + " chunk " + std::to_string(st.current.chunk) +
                    ")";
        else
          report += "stopped after op #" + std::to_string(st.done);
      }
    }
  }
  if (stuck == 0) return {};
  return "the programs deadlocked: " + std::to_string(stuck) + " streams did not finish" + report;
}

}  // namespace stepsim::engine
