#include "simulator/engine/gpu_actor.hpp"
#include "simulator/engine/span_recording.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

namespace stepsim::engine {

using namespace stepsim::ops;

namespace sg4 = simgrid::s4u;

namespace {

int payload_token;  // mailboxes carry a pointer; the data itself is only simulated

// Where one stream's current op stands.
enum class Stage : uint8_t {
  Idle,      // no op taken (or the stream is dry)
  Deps,      // waiting for the op's dependencies, one at a time in their order
  Setup,     // comm op: the handshake before its flows (a timer)
  Flows,     // comm op: flows in flight
  Compute,   // compute op: its Exec runs
  Finished,  // the program is over for this stream
};

struct StreamRun {
  Stage stage = Stage::Idle;
  FetchedOp cur;
  size_t dep = 0;          // deps before it have completed
  bool registered = false;  // a waiter for deps[dep] is registered
  double dep_since = 0;    // when waiting for deps[dep] began
  const OpRef* ended_on = nullptr;  // the dep whose completion ended the wait for deps
  double taken = 0;        // when the op was taken from the queue (its wait for deps began)
  bool waited = false;     // compute stream: the op had to wait for its deps, since t0
  double t0 = 0;
  double start = 0, posted = 0, setup_until = 0;
  sg4::ExecPtr exec;  // compute on a host whose speed SimGrid varies (a straggler's profile)
  // Compute on a host of fixed speed (but for the SM-tax pstate, which only this actor switches):
  // the work left, at what rate since when, and so when it ends. No SimGrid activity needed.
  double work_left = 0, rate = 0, rated_at = 0, ends_at = 0;
  std::vector<sg4::CommPtr> comms;
  size_t next_comm = 0;  // comms before it have completed
  std::vector<void*> received;  // where the gets write (the pointers are never read)
};

// Lazy compute (EngineState::lazy_compute): a compute op that nobody waits on, followed on the
// compute stream by queued ops whose deps are done, needs no wake-up at its end: the actor sleeps
// until the end of the whole chain (or its next other event) and then completes each op at its own
// end time, starting the next one there (catch_up). Exact: only this actor can observe the chain
// (every dep is local), the host's speed changes only at this actor's own events, and each op's
// end is the same sum of the same terms. It saves about half the compute wake-ups of a step.
constexpr int kMaxChain = 8;  // ops looked ahead per wait (chains are short: 64 saved no more)

class GpuDriver {
 public:
  GpuDriver(EngineState& e, GpuState& g)
      : e_(e), g_(g), runs_(g.streams.size()), lazy_(e.lazy_compute && g.fixed_speed) {}

  void run() {
    for (size_t s = 0; s < runs_.size(); ++s) g_.ready.push_back(uint32_t(s));
    std::vector<sg4::ActivityPtr> waiting;
    std::vector<int> owner;  // stream of each waited activity; -1: the doorbell
    while (!e_.stopping) {
      while (!g_.ready.empty()) {
        const uint32_t s = g_.ready.back();
        g_.ready.pop_back();
        advance(int(s));
      }
      if (g_.remote_waits > 0 && !g_.doorbell) {
        g_.doorbell = sg4::Exec::init()->set_flops_amount(std::numeric_limits<double>::max())->set_host(g_.host);
        g_.doorbell->start();
        g_.doorbell->suspend();
        if (!g_.ready.empty()) continue;  // news arrived while arming it
      }
      waiting.clear();
      owner.clear();
      double deadline = std::numeric_limits<double>::infinity();
      for (size_t s = 0; s < runs_.size(); ++s) {
        StreamRun& r = runs_[s];
        if (r.stage == Stage::Compute && r.exec) {
          waiting.push_back(r.exec);
          owner.push_back(int(s));
        } else if (r.stage == Stage::Compute) {
          deadline = std::min(deadline, chain_end(r));
        } else if (r.stage == Stage::Flows) {
          waiting.push_back(r.comms[r.next_comm]);
          owner.push_back(int(s));
        } else if (r.stage == Stage::Setup) {
          deadline = std::min(deadline, r.setup_until);
        }
      }
      if (g_.remote_waits > 0) {
        waiting.push_back(g_.doorbell);
        owner.push_back(-1);
      }
      if (waiting.empty() && std::isinf(deadline)) break;  // all done, or stuck (reported after the run)

      ssize_t which = -1;
      g_.blocked = true;
      try {
        if (waiting.empty())
          sg4::this_actor::sleep_until(deadline);
        else if (std::isinf(deadline))
          which = sg4::Activity::wait_any(waiting);
        else
          which = sg4::Activity::wait_any_for(waiting, std::max(0.0, deadline - now()));
      } catch (const simgrid::CancelException&) {
        // Whoever rings the doorbell takes it; otherwise SimGrid cancelled it while killing this
        // actor (a deadlock): end quietly, check_finished reports where the streams stopped.
        if (g_.doorbell || e_.stopping) return;
        which = ssize_t(waiting.size()) - 1;  // the doorbell rang: g.ready holds the news
      }
      g_.blocked = false;
      catch_up();
      waiting.clear();  // drop the references now
      if (which < 0) {
        for (size_t s = 0; s < runs_.size(); ++s) {
          StreamRun& r = runs_[s];
          if (r.stage == Stage::Setup && r.setup_until <= deadline) {
            if (on_copy_engine(r)) {
              copy_done(int(s));
              g_.ready.push_back(uint32_t(s));
            } else {
              post_flows(int(s));
            }
          } else if (r.stage == Stage::Compute && !r.exec && r.ends_at <= deadline) {
            compute_done(int(s));
            g_.ready.push_back(uint32_t(s));
          }
        }
      } else if (owner[size_t(which)] >= 0) {
        activity_done(owner[size_t(which)]);
      }
    }
    if (g_.doorbell) g_.doorbell->cancel();  // an idle doorbell must not outlive the actor
    g_.doorbell = nullptr;
  }

 private:
  // SimGrid's clock, or while catch_up completes an op that ended earlier, that op's end.
  double now() const { return at_ >= 0 ? at_ : e_.clock; }

  bool has_waiter(uint32_t seq) const {
    for (const Waiter& w : g_.streams[kComputeStream].waiters)
      if (w.seq == seq) return true;
    return false;
  }

  // When the compute stream next needs this actor (see kMaxChain): the end of its running op, or
  // of the chain of queued ops after it that start as soon as their predecessor ends.
  double chain_end(const StreamRun& r) const {
    double t = r.ends_at;
    if (!lazy_ || r.exec) return t;
    const StreamQueue& q = g_.queues[kComputeStream];
    uint32_t seq = r.cur.seq;
    size_t dep = q.dep_head;
    for (size_t op = q.op_head; op < q.ops.size() && op < q.op_head + kMaxChain; ++op, ++seq) {
      if (has_waiter(seq)) break;  // someone must learn at its end that op `seq` completed
      const Op& next = q.ops[op];
      if (next.comm || next.work_flops <= 0) break;
      for (size_t d = 0; d < next.n_deps; ++d) {
        const OpRef& ref = q.deps[dep + d];
        const bool earlier_compute = ref.gpu() == g_.id && ref.stream() == kComputeStream && ref.seq <= seq;
        if (!earlier_compute && !e_.is_done(ref)) return t;
      }
      dep += next.n_deps;
      t = t + next.work_flops / g_.speed;  // as start_op computes ends_at (no jitter here: nothing is perturbed)
    }
    return t;
  }

  // Completes the compute ops that ended before now (a chain slept through), each at its own end,
  // and starts its successor there.
  void catch_up() {
    if (!lazy_) return;
    StreamRun& r = runs_[kComputeStream];
    while (r.stage == Stage::Compute && !r.exec && r.ends_at < e_.clock) {
      at_ = r.ends_at;
      compute_done(kComputeStream);
      advance(kComputeStream);
      at_ = -1;
    }
  }

  // Moves stream s forward as far as it goes without waiting.
  void advance(int s) {
    StreamRun& r = runs_[size_t(s)];
    for (;;) {
      switch (r.stage) {
        case Stage::Idle:
          if (!take_next(s)) return;
          break;
        case Stage::Deps:
          if (!deps_done(s)) return;
          start_op(s);
          break;
        default: return;  // in flight, or finished
      }
    }
  }

  // The compute stream pulls the program forward whenever it runs dry; a comm stream only within
  // the look-ahead, so a stream idle for most of the step (e.g. the final gradient reduction)
  // does not make the whole program materialise at once.
  bool take_next(int s) {
    StreamRun& r = runs_[size_t(s)];
    const StreamQueue& q = g_.queues[size_t(s)];
    while (q.empty()) {
      if (g_.exhausted) {
        r.stage = Stage::Finished;
        return false;
      }
      if (s == kComputeStream || e_.buffered_ops(g_) < kLookaheadOps) {
        e_.generate_piece(g_);
      } else {
        g_.streams[size_t(s)].starving = true;
        return false;
      }
    }
    e_.take(g_, s, r.cur);
    r.stage = Stage::Deps;
    r.dep = 0;
    r.registered = false;
    r.dep_since = now();
    r.taken = now();
    r.ended_on = nullptr;
    r.waited = false;
    if (s == kComputeStream) begin_compute_wait(r);
    else if (g_.watching && g_.streams[size_t(s)].watch_upto != kNoWatch && r.cur.seq <= g_.streams[size_t(s)].watch_upto)
      for (const OpRef& d : r.cur.deps) watch(d);  // a watched op, fetched after the wait began
    return true;
  }

  // The compute stream waits on local comm op `d` (and the ops before it on its stream), and
  // through each of them on the comm ops they wait for on other streams of this GPU (a TP
  // all-gather on its layer's FSDP gather, a CP all-gather on the TP one): all are watched, so the
  // wait they cause is exposed communication, never bubble. Ops not fetched yet are followed when
  // take_next fetches them.
  void watch(const OpRef& d) {
    if (d.gpu() != g_.id || d.stream() == kComputeStream || e_.is_done(d)) return;
    uint32_t& upto = g_.streams[d.stream()].watch_upto;
    if (upto != kNoWatch && upto >= d.seq) return;
    upto = d.seq;
    const StreamRun& r = runs_[d.stream()];
    if (r.stage == Stage::Deps && r.cur.seq <= d.seq)
      for (const OpRef& dd : r.cur.deps) watch(dd);
  }

  // The idle split: while the compute stream waits for its next op's deps (from t0 to t1), every
  // local comm-stream op it waits on -- and the ops before it on that stream, which it waits on
  // implicitly -- reports when it occupied the GPU: a collective or all-to-all from its start (its
  // kernel runs, waiting for peers included), a pipeline transfer from the moment both ends joined
  // (before that the receiver waits for another stage's compute). Their union within [t0, t1] is
  // exposed communication; the rest of the wait is bubble: another stage, or the schedule.
  void begin_compute_wait(StreamRun& r) {
    bool must_wait = false;
    for (const OpRef& d : r.cur.deps) must_wait = must_wait || !e_.is_done(d);
    if (!must_wait) return;
    r.waited = true;
    r.t0 = now();
    g_.watching = true;
    g_.watched.clear();
    for (auto& v : g_.watched_by_class) v.clear();
    for (const OpRef& d : r.cur.deps) watch(d);
  }

  void end_compute_wait(StreamRun& r) {
    const double t1 = now();
    if (r.ended_on != nullptr) e_.perturb.compute_waited(g_.id, *r.ended_on, r.t0, t1);
    for (StreamState& st : g_.streams) st.watch_upto = kNoWatch;
    g_.watching = false;
    const double exposed = covered_within(g_.watched, r.t0, t1);
    g_.exposed_s += exposed;
    // Ops of an overlapped F&B pair carry their partner's microbatch in microbatch2: a wait on a
    // class that reports it (EP) counts apart when the waiting op has none.
    const bool unpaired = r.cur.op.tag.microbatch2 == kNoIndex;
    for (size_t c = 0; c < kCommClasses; ++c) {
      if (g_.watched_by_class[c].empty()) continue;
      const double covered = covered_within(g_.watched_by_class[c], r.t0, t1);
      g_.exposed_by_class[c] += covered;
      if (unpaired && comm_class_info(c).reports_unpaired) g_.exposed_unpaired += covered;
    }
    if (g_.record) record_wait(e_, g_, r.t0, t1);
  }

  // Deps are waited for one at a time, in order; the one whose wait took time last ended the wait.
  bool deps_done(int s) {
    StreamRun& r = runs_[size_t(s)];
    while (r.dep < r.cur.deps.size()) {
      const OpRef& d = r.cur.deps[r.dep];
      if (!e_.is_done(d)) {
        if (!r.registered) e_.add_waiter(d, g_, s);
        r.registered = true;
        return false;
      }
      if (now() > r.dep_since) r.ended_on = &d;
      r.registered = false;
      ++r.dep;
      r.dep_since = now();
    }
    return true;
  }

  void start_op(int s) {
    StreamRun& r = runs_[size_t(s)];
    if (s == kComputeStream) {
      if (r.waited) end_compute_wait(r);
      e_.perturb.compute_starts(g_.id, now());
      r.start = now();
      if (r.cur.op.work_flops > 0) {
        r.stage = Stage::Compute;
        const double work = r.cur.op.work_flops * e_.perturb.jitter(g_.id);
        if (g_.fixed_speed) {
          r.work_left = work;
          r.rated_at = now();
          r.rate = g_.speed;
          r.ends_at = r.rated_at + r.work_left / r.rate;
        } else {
          r.exec = sg4::this_actor::exec_async(work);
        }
        ++e_.activities;
      } else {
        compute_done(s);
      }
      return;
    }
    // A comm op is a kernel: it starts once its deps are done and the stream's previous op has
    // ended, posts all its sends and receives at once, and ends when every flow has.
    r.start = now();
    e_.perturb.comm_starts(g_.id, s, r.ended_on, r.taken, r.start);
    if (on_copy_engine(r)) {
      // A copy engine's transfer to or from host memory: it takes no SMs (no SM tax) and lasts
      // its setup time.
      r.stage = Stage::Setup;
      r.setup_until = r.start + r.cur.op.setup_s;
      if (r.cur.op.setup_s <= 0) copy_done(s);
      return;
    }
    if (r.cur.op.n_out + r.cur.op.n_in == 0) {
      r.stage = Stage::Idle;
      e_.perturb.comm_done(g_.id, s, {}, {}, r.start, r.start);
      e_.complete(g_, s, r.cur, r.start, now());
      return;
    }
    r.stage = Stage::Setup;
    r.setup_until = r.start + r.cur.op.setup_s;  // handshake before the data moves
    e_.comm_started(g_, s, r.cur.op.tag.comm_class);
    rerate();
    if (r.cur.op.setup_s <= 0) post_flows(s);
  }

  void post_flows(int s) {
    StreamRun& r = runs_[size_t(s)];
    r.stage = Stage::Flows;
    r.posted = now();
    r.comms.clear();
    r.next_comm = 0;
    r.received.assign(r.cur.op.n_in, nullptr);  // sized before posting: the gets write into it
    const size_t n_out = r.cur.op.n_out, n_in = r.cur.op.n_in;
    for (size_t i = 0; i < n_out; ++i) {
      const FlowSpec& f = r.cur.flows[i];
      const GpuState& peer = e_.gpus[f.peer];
      const auto bytes = uint64_t(std::llround(f.bytes));
      e_.perturb.flow_sent(g_.id, f.peer, f.bytes);
      if (peer.simulated)
        r.comms.push_back(e_.mailbox(g_, g_.id, f.peer, f.channel)->put_async(&payload_token, bytes));
      else  // mirrored peer: nobody posts the receive, so send straight to its host
        r.comms.push_back(sg4::Comm::sendto_async(g_.host, peer.host, bytes));
    }
    for (size_t i = 0; i < n_in; ++i) {
      const FlowSpec& f = r.cur.flows[n_out + i];
      const GpuState& peer = e_.gpus[f.peer];
      if (peer.simulated) {
        r.comms.push_back(e_.mailbox(g_, f.peer, g_.id, f.channel)->get_async(&r.received[i]));
      } else {  // the mirrored peer sends what this GPU expects, now
        r.comms.push_back(sg4::Comm::sendto_async(peer.host, g_.host, uint64_t(std::llround(f.bytes))));
        ++e_.activities;
      }
    }
    e_.activities += n_out;  // a transfer is one activity, counted at its sender
  }

  void activity_done(int s) {
    StreamRun& r = runs_[size_t(s)];
    if (r.stage == Stage::Compute) {
      r.exec = nullptr;
      compute_done(s);
    } else if (++r.next_comm == r.comms.size()) {
      flows_done(s);
    }
    g_.ready.push_back(uint32_t(s));
  }

  // The host's speed may have changed (the SM tax): the running compute goes on at the new rate.
  void rerate() {
    StreamRun& r = runs_[kComputeStream];
    if (r.stage != Stage::Compute || r.exec) return;
    const double speed = g_.speed;
    if (speed == r.rate) return;
    const double t = now();
    r.work_left = std::max(0.0, r.work_left - r.rate * (t - r.rated_at));
    r.rated_at = t;
    r.rate = speed;
    r.ends_at = t + r.work_left / r.rate;
  }

  void compute_done(int s) {
    StreamRun& r = runs_[size_t(s)];
    r.stage = Stage::Idle;
    const double end = now();
    g_.compute_s += end - r.start;
    e_.perturb.compute_done(g_.id, end);  // before complete() wakes the GPUs waiting on this op
    e_.complete(g_, s, r.cur, r.start, end);
  }

  // The op runs on a copy engine (ops::CommClassInfo::copy_engine): no SMs, no flows.
  static bool on_copy_engine(const StreamRun& r) { return comm_class_info(size_t(r.cur.op.tag.comm_class)).copy_engine; }

  // A copy-engine op's end: its whole time counts as moving data (exposed from its start while the
  // compute stream waits for it, as the class says).
  void copy_done(int s) {
    StreamRun& r = runs_[size_t(s)];
    r.stage = Stage::Idle;
    const CommClass cls = r.cur.op.tag.comm_class;
    moving_.assign(1, Interval{r.start, now()});
    e_.copy_finished(g_, cls, moving_);
    e_.perturb.comm_done(g_.id, s, {}, {}, r.start, now());
    watch(s, cls, moving_);
    e_.complete(g_, s, r.cur, r.start, now());
  }

  // Records a finished comm op's time as exposed when the compute stream waited for it.
  void watch(int s, CommClass cls, const std::vector<Interval>& moving) {
    const StreamRun& r = runs_[size_t(s)];
    const StreamState& st = g_.streams[size_t(s)];
    if (!g_.watching || st.watch_upto == kNoWatch || r.cur.seq > st.watch_upto) return;
    // The class says from when the op counts as exposed (ops::Exposure): a collective or
    // all-to-all from its kernel's start, a pipeline transfer only while its data moves.
    auto& by_class = g_.watched_by_class[size_t(cls)];
    if (comm_class_info(size_t(cls)).exposure == Exposure::WhileMoving) {
      g_.watched.insert(g_.watched.end(), moving.begin(), moving.end());
      by_class.insert(by_class.end(), moving.begin(), moving.end());
    } else {
      g_.watched.push_back({r.start, now()});
      by_class.push_back({r.start, now()});
    }
  }

  void flows_done(int s) {
    StreamRun& r = runs_[size_t(s)];
    r.stage = Stage::Idle;
    moving_.clear();
    for (const sg4::CommPtr& c : r.comms) moving_.push_back({c->get_start_time(), c->get_finish_time()});
    merge_intervals(moving_);
    const CommClass cls = r.cur.op.tag.comm_class;
    e_.comm_finished(g_, s, cls, moving_);
    e_.perturb.comm_done(g_.id, s, r.cur.flows, r.comms, r.posted, now());  // before complete() wakes its waiters
    rerate();
    watch(s, cls, moving_);
    r.comms.clear();  // drop the activity references now, not at the next op
    e_.complete(g_, s, r.cur, r.start, now());
  }

  EngineState& e_;
  GpuState& g_;
  std::vector<StreamRun> runs_;
  std::vector<Interval> moving_;
  const bool lazy_;
  double at_ = -1;  // catch_up's time, while it runs
};

}  // namespace

void run_gpu(EngineState& e, GpuState& g) { GpuDriver(e, g).run(); }

}  // namespace stepsim::engine
