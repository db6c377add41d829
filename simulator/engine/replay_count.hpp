// What a replay will run, counted before it starts: every simulated GPU's program is emitted as
// the engine will consume it, and its ops and SimGrid activities are counted by the engine's own
// rules (a compute op with work is one activity, a transfer is one at its sender, a flow a
// mirrored GPU sends is one). The replay-size guard refuses a plan on this count and the progress
// line announces it, so both are what the replay does, not an estimate of it.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "platforms/cluster_platform.hpp"
#include "vocabulary/workload.hpp"

namespace stepsim::engine {

struct ReplayCount {
  double ops = 0;         // every op of every simulated GPU (SimResult::ops)
  double activities = 0;  // compute ops with work plus transfers (SimResult::activities)
  int64_t gpus = 0;       // GPUs simulated
  int64_t gpus_counted = 0;  // GPUs whose programs were emitted: all of them unless stopped
  bool stopped = false;      // the count passed `stop_above` and stopped there (a lower bound)
  std::vector<bool> simulated;  // per GPU of the platform: whether the replay runs it
};

// Counts until the activities pass `stop_above` (then the count is a lower bound and `stopped`),
// so refusing a plan far over a limit costs no more than counting up to the limit.
// `spec` is the platform the workload's GPU ids refer to (as for engine::run).
ReplayCount count_replay(const PlatformSpec& spec, const ops::Workload& workload, double stop_above = std::numeric_limits<double>::infinity());

}  // namespace stepsim::engine
