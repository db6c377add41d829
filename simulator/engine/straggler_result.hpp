// What a perturbed step reports (scenario.stragglers, scenario.jitter_sigma): who waited for whom,
// the traffic a NIC that is down sent through a neighbour's NIC, and the unperturbed baseline.
#pragma once

#include <cstdint>
#include <vector>

namespace stepsim {

// The GPU a rank waited on longest. A rank waits on a peer while its compute stream idles until
// the peer's op it depends on completes (pipeline inputs without transfers), until the peer joins
// a transfer the compute stream waits for (a late sender, a late all-to-all partner), or until a
// transfer through the peer's faulty NIC or NVLink port ends after the kernel's other transfers.
// Seconds are summed over the step. The root of a wait follows the chain: if the peer's op was
// itself late because the peer waited on a third GPU (or followed, without a gap, an op that was),
// the wait traces back to that GPU's root; a faulty port is its GPU's (a NIC lent to a GPU whose
// NIC is down: that GPU's).
struct RankWait {
  int64_t rank = 0;
  int64_t peer = -1;    // -1: waited on no other GPU
  double waited_s = 0;  // on that peer
  double total_s = 0;   // on all peers
  int64_t root = -1;    // the GPU its waits trace back to most
  double root_s = 0;
};

// How long other GPUs waited on one GPU, summed over them.
struct WaitedFor {
  int64_t gpu = 0;
  double waited_s = 0;
  int64_t ranks = 0;  // how many GPUs waited on it
};

// A NIC that was down and the traffic that went through another GPU's NIC instead.
struct NicDetour {
  int64_t gpu = 0;
  int64_t via = 0;
  double bytes = 0;  // inter-node bytes sent or received by `gpu` (each flow once)
};

struct StragglerReport {
  std::vector<RankWait> rank_waits;    // per simulated rank
  std::vector<WaitedFor> waited_for;   // the GPUs others waited on directly, most first (at most 16)
  // The perturbed GPUs the waits trace back to, most first (at most 16): those a straggler item or
  // jitter acts on (a slow clock, a faulty NIC or NVLink port, the NICs under a faulty cable).
  std::vector<WaitedFor> root_causes;
  std::vector<NicDetour> detours;
  double rerouted_bytes = 0;           // sum over detours
  double baseline_step_s = -1;         // the same plan without stragglers or jitter (< 0: not run)
};

}  // namespace stepsim
