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
#include "simulator/engine/op.hpp"
#include "simulator/engine/straggler_result.hpp"
#include "workloads/routing/seeded_random.hpp"

namespace stepsim::engine {

class Perturbations {
 public:
  void init(const PlatformSpec& spec, double jitter_sigma, uint64_t seed);

  // Factor on the work of GPU `gpu`'s next compute op: lognormal with mean 1 (exp(sigma z - sigma^2 / 2)),
  // drawn in the GPU's op order; exactly 1 without jitter.
  double jitter(uint32_t gpu);

  // The compute stream of `gpu` idles from t (waiting for its next op's deps); t < 0: it runs again.
  void idle_since(uint32_t gpu, double t) { idle_since_[gpu] = t; }
  // The compute stream of `gpu` idled `s` seconds until an op of GPU `on` completed (a remote dep).
  void waited(uint32_t gpu, uint32_t on, double s);
  // `gpu`'s next compute op starts (after any wait) / has completed: the op inherits the root of
  // the wait that delayed it, or is its own.
  void compute_starts(uint32_t gpu);
  void compute_done(uint32_t gpu) { done_root_[gpu] = running_root_[gpu]; }
  // A comm op of `gpu` that its idle compute stream waits on posted its flows at `posted`; each
  // comm's start is when its peer joined. The wait for the last peer, while idle, counts.
  void comm_joined(uint32_t gpu, const std::vector<FlowSpec>& flows, const std::vector<simgrid::s4u::CommPtr>& comms,
                   double posted);
  // An outgoing flow: counts bytes that a NIC that is down sends or receives through another NIC.
  void flow_sent(uint32_t src, uint32_t dst, double bytes);

  // `simulated[g]`: GPU g ran its program.
  StragglerReport report(const std::vector<bool>& simulated) const;

 private:
  double sigma_ = 0;
  uint64_t seed_ = 0;
  int64_t gpus_per_node_ = 1;
  std::vector<std::unique_ptr<SeededRandom>> rng_;            // per GPU, made on first draw
  std::vector<std::unordered_map<uint32_t, double>> waits_;  // per GPU: peer -> seconds waited
  std::vector<std::unordered_map<uint32_t, double>> roots_;  // per GPU: root GPU -> seconds waited
  std::vector<int32_t> running_root_, done_root_;            // per GPU: root of the running / last op
  std::vector<int32_t> pending_root_;                        // per GPU: root of the wait in progress
  void add_wait(uint32_t gpu, uint32_t on, double s);
  std::vector<double> idle_since_;                           // per GPU: -1 while computing
  std::vector<int64_t> via_;                                 // per GPU: -1 or the GPU lending its NIC
  std::vector<double> rerouted_;                             // per GPU with its NIC down
};

}  // namespace stepsim::engine
