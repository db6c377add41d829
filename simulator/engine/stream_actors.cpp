#include "simulator/engine/stream_actors.hpp"
#include "simulator/engine/span_recording.hpp"

#include <algorithm>
#include <cmath>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

namespace stepsim::engine {

namespace sg4 = simgrid::s4u;

namespace {

double now() { return sg4::Engine::get_clock(); }

int payload_token;  // mailboxes carry a pointer; the data itself is only simulated

}  // namespace

// The idle split: while the compute stream waits for its next op's deps (from t0 to t1), every
// local comm-stream op it waits on -- and the ops before it on that stream, which it waits on
// implicitly -- reports when it occupied the GPU: a collective or all-to-all from its start (its
// kernel runs, waiting for peers included), a pipeline transfer from the moment both ends joined
// (before that the receiver waits for another stage's compute). Their union within [t0, t1] is
// exposed communication; the rest of the wait is bubble: another stage, or the schedule.
void run_compute_stream(EngineState& e, GpuState& g, sg4::Semaphore* wake) {
  FetchedOp cur;
  while (e.fetch(g, kComputeStream, cur, wake)) {
    bool must_wait = false;
    for (const OpRef& d : cur.deps) must_wait = must_wait || !e.is_done(d);
    if (must_wait) {
      const double t0 = now();
      g.watching = true;
      g.watched.clear();
      for (auto& v : g.watched_by_class) v.clear();
      for (const OpRef& d : cur.deps) {
        if (d.gpu() != g.id || d.stream() == kComputeStream || e.is_done(d)) continue;
        uint32_t& upto = g.streams[d.stream()].watch_upto;
        upto = upto == kNoWatch ? d.seq : std::max(upto, d.seq);
      }
      e.perturb.idle_since(g.id, t0);
      const OpRef* ended_on = nullptr;  // the dep whose completion ended the wait
      for (const OpRef& d : cur.deps) {
        const double before = now();
        e.wait(d, wake);
        if (now() > before) ended_on = &d;
      }
      e.perturb.idle_since(g.id, -1);
      if (ended_on != nullptr) e.perturb.waited(g.id, ended_on->gpu(), now() - t0);
      for (StreamState& st : g.streams) st.watch_upto = kNoWatch;
      g.watching = false;
      const double exposed = covered_within(g.watched, t0, now());
      g.exposed_s += exposed;
      for (size_t c = 0; c < 5; ++c)
        if (!g.watched_by_class[c].empty()) g.exposed_by_class[c] += covered_within(g.watched_by_class[c], t0, now());
      // Ops of an overlapped F&B pair carry their partner's microbatch in microbatch2.
      if (cur.op.tag.microbatch2 == kNoIndex) g.exposed_unpaired += exposed;
      if (g.record) record_wait(e, g, t0, now());
    }
    e.perturb.compute_starts(g.id);
    const double start = now();
    if (cur.op.flops > 0) {
      sg4::this_actor::execute(cur.op.flops * e.perturb.jitter(g.id));
      ++e.activities;
    }
    const double end = now();
    g.compute_s += end - start;
    e.perturb.compute_done(g.id);  // before complete() wakes the GPUs waiting on this op
    e.complete(g, kComputeStream, cur, start, end);
  }
}

// A comm op is a kernel: it starts once its deps are done and the stream's previous op has ended,
// posts all its sends and receives at once, and ends when every flow has.
void run_comm_stream(EngineState& e, GpuState& g, int stream, sg4::Semaphore* wake) {
  FetchedOp cur;
  std::vector<sg4::CommPtr> comms;
  std::vector<void*> received;
  std::vector<Interval> moving;
  StreamState& st = g.streams[size_t(stream)];
  while (e.fetch(g, stream, cur, wake)) {
    for (const OpRef& d : cur.deps) e.wait(d, wake);
    const double start = now();
    const size_t n_out = cur.op.n_out, n_in = cur.op.n_in;
    if (n_out + n_in > 0) {
      e.comm_started(g, stream);
      if (cur.op.flops > 0) sg4::this_actor::sleep_for(cur.op.flops);  // handshake before the data moves
      comms.clear();
      const double posted = now();
      received.assign(n_in, nullptr);  // sized before posting: the gets write into it
      for (size_t i = 0; i < n_out; ++i) {
        const FlowSpec& f = cur.flows[i];
        const GpuState& peer = e.gpus[f.peer];
        const auto bytes = uint64_t(std::llround(f.bytes));
        e.perturb.flow_sent(g.id, f.peer, f.bytes);
        if (peer.simulated)
          comms.push_back(e.mailbox(g, g.id, f.peer, f.channel)->put_async(&payload_token, bytes));
        else  // mirrored peer: nobody posts the receive, so send straight to its host
          comms.push_back(sg4::Comm::sendto_async(g.host, peer.host, bytes));
      }
      for (size_t i = 0; i < n_in; ++i) {
        const FlowSpec& f = cur.flows[n_out + i];
        const GpuState& peer = e.gpus[f.peer];
        if (peer.simulated) {
          comms.push_back(e.mailbox(g, f.peer, g.id, f.channel)->get_async(&received[i]));
        } else {  // the mirrored peer sends what this GPU expects, now
          comms.push_back(sg4::Comm::sendto_async(peer.host, g.host, uint64_t(std::llround(f.bytes))));
          ++e.activities;
        }
      }
      e.activities += n_out;  // a transfer is one activity, counted at its sender
      sg4::Comm::wait_all(comms);

      moving.clear();
      for (const sg4::CommPtr& c : comms) moving.push_back({c->get_start_time(), c->get_finish_time()});
      merge_intervals(moving);
      e.comm_finished(g, stream, cur.op.tag.kind, moving);
      if (g.watching && st.watch_upto != kNoWatch && cur.seq <= st.watch_upto) {
        // A collective or all-to-all kernel occupies the GPU from its start, waiting for slower
        // peers included (what a profiler shows as communication); only a pipeline receive whose
        // sender has not produced its data yet counts as bubble until the data moves.
        e.perturb.comm_joined(g.id, cur.flows, comms, posted);  // the compute stream waits on it
        auto& by_class = g.watched_by_class[size_t(comm_class(cur.op.tag.kind))];
        if (comm_class(cur.op.tag.kind) == CommClass::Pp) {
          g.watched.insert(g.watched.end(), moving.begin(), moving.end());
          by_class.insert(by_class.end(), moving.begin(), moving.end());
        } else {
          g.watched.push_back({start, now()});
          by_class.push_back({start, now()});
        }
      }
      comms.clear();  // drop the activity references now, not at the next op
    }
    e.complete(g, stream, cur, start, now());
  }
}

}  // namespace stepsim::engine
