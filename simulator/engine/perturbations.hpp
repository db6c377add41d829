// The engine's share of perturbed steps: per-kernel jitter on compute ops (seeded per GPU, so a
// draw does not depend on how SimGrid interleaves GPUs), who waited for whom, and the bytes a NIC
// that is down sends through a neighbour's NIC. Slow clocks and links live in the platform.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u/Comm.hpp>

#include "platforms/cluster_platform.hpp"
#include "vocabulary/op.hpp"
#include "simulator/engine/straggler_result.hpp"
#include "vocabulary/seeded_random.hpp"

namespace stepsim::engine {

class Perturbations {
 public:
  void init(const PlatformSpec& spec, double jitter_sigma, uint64_t seed);

  // Factor on the work of GPU `gpu`'s next compute op: lognormal with mean 1 (exp(sigma z - sigma^2 / 2)),
  // drawn in the GPU's op order; exactly 1 without jitter.
  double jitter(uint32_t gpu);

  // Who waited for whom. Every op records why it ended when it did, when that was another GPU's
  // doing (a Delay); a compute op that idled until a dep completed inherits the dep's delay, so a
  // chain of waits traces back to the GPU that was slow itself (its root).
  //
  // A comm op of `gpu` on `stream` starts at `now`; `ended_on` (or null) is the dep whose
  // completion ended its wait for deps, which began at `since`.
  void comm_starts(uint32_t gpu, int stream, const ops::OpRef* ended_on, double since, double now);
  // It ended at `now`: its flows were posted at `posted`, each comm's start is when its peer
  // joined. The delay is the latest of: its flows through another GPU's faulty NIC or NVLink port
  // (scenario.stragglers) running on after every other flow had ended (that GPU's fault); the last
  // peer joining after `posted` (that peer's root at the time); its start, late because of a dep or
  // of the stream's previous op (their delay).
  void comm_done(uint32_t gpu, int stream, const std::vector<ops::FlowSpec>& flows,
                 const std::vector<simgrid::s4u::CommPtr>& comms, double posted, double now);
  // The compute stream of `gpu` idled from t0 to t1 until the dep `ended_on` completed: a remote
  // op (a wait on that GPU, traced to its root) or a local comm op (the part of the idle time its
  // delay covers, a wait on whoever delayed it).
  void compute_waited(uint32_t gpu, const ops::OpRef& ended_on, double t0, double t1);
  // `gpu`'s next compute op starts (after any wait) / has completed at t: the op inherits the delay
  // of the wait that delayed it, or, when it follows the compute op before it without a gap (it is
  // as late as that one), that op's delay if a perturbed GPU caused it (a pipeline's own fill and
  // drain are nobody's fault); else it is nobody else's doing.
  void compute_starts(uint32_t gpu, double t);
  void compute_done(uint32_t gpu, double t);
  // An outgoing flow: counts bytes that a NIC that is down sends or receives through another NIC.
  void flow_sent(uint32_t src, uint32_t dst, double bytes);

  // `simulated[g]`: GPU g ran its program.
  StragglerReport report(const std::vector<bool>& simulated) const;

  // Some GPU is slow, jittered or behind a faulty link (who-waited-for-whom is then reported).
  bool any() const;

 private:
  double sigma_ = 0;
  uint64_t seed_ = 0;
  int64_t gpus_per_node_ = 1;
  std::vector<std::unique_ptr<SeededRandom>> rng_;            // per GPU, made on first draw
  std::vector<std::unordered_map<uint32_t, double>> waits_;  // per GPU: peer -> seconds waited
  std::vector<std::unordered_map<uint32_t, double>> roots_;  // per GPU: root GPU -> seconds waited

  // Why an op ended when it did, when another GPU was the reason: `peer` is the GPU it waited on
  // directly, `root` where that wait traces back to; [from, to) the part of its time it cost.
  struct Delay {
    int32_t peer = -1, root = -1;  // -1: nobody else's doing
    double from = 0, to = 0;
    double ended = -1;  // when the op ended
  };
  std::vector<std::vector<Delay>> last_;     // per GPU, per stream: the delay of its last completed op
  std::vector<std::vector<Delay>> started_;  // per GPU, per comm stream: the running op's start delay
  std::vector<Delay> pending_, running_;     // per GPU: compute's wait in progress / the running op's
  // Per GPU: (time, root) each time the root of its latest op (a compute op completed, a comm op
  // started) changed; before the first entry, the GPU itself.
  std::vector<std::vector<std::pair<double, int32_t>>> root_history_;
  int32_t root_at(uint32_t gpu, double t) const;  // `gpu`'s root at t
  void note_root(uint32_t gpu, double t, int32_t root);
  Delay& slot(std::vector<std::vector<Delay>>& v, uint32_t gpu, uint32_t stream);
  // The delay an op inherits from the dep that ended its wait over [from, to).
  Delay inherited(uint32_t gpu, const ops::OpRef& dep, double from, double to);
  void add_wait(uint32_t gpu, uint32_t on, double s, int32_t root);
  std::vector<bool> perturbed_;  // per GPU: slow, jittered or behind a faulty NIC, NVLink or cable
  // Whether an op that follows one with delay `d` without a gap carries that delay on.
  bool carries_on(const Delay& d, double t) const {
    return d.peer >= 0 && d.root >= 0 && perturbed_[size_t(d.root)] && d.ended >= t - 1e-12;
  }
  std::vector<int64_t> via_;                                 // per GPU: -1 or the GPU lending its NIC
  std::vector<double> rerouted_;                             // per GPU with its NIC down

  // A GPU's port (NIC or NVLink) is faulty during `windows` (seconds, [from, to)); the fault is
  // `culprit`'s: the GPU itself, or the GPU whose NIC is down when this one lends it its NIC.
  struct PortFault {
    int64_t culprit = -1;  // -1: healthy all step
    std::vector<std::pair<double, double>> windows;
  };
  std::vector<PortFault> nic_faults_, nvlink_faults_;  // per GPU
  // A GPU's share of its leaf's uplinks, slow while a leaf-spine cable of its leaf is (empty when
  // no cable is faulty): the GPUs under that leaf are the ones the fault touches.
  std::vector<PortFault> uplink_faults_;
  FabricShape shape_;
  // The culprit of a flow between `gpu` and `peer` that ran in [from, to): `gpu`'s own fault first
  // (its own port slowed it), else the peer's, then a slow uplink the flow climbed (the culprit is
  // the GPU under the faulty leaf); -1 when every port was healthy throughout.
  int64_t flow_culprit(uint32_t gpu, uint32_t peer, double from, double to) const;
};

}  // namespace stepsim::engine
