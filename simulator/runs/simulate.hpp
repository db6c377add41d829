// One training step, simulated: picks the workload (plan.workload.kind) and the schedule
// (plan.parallel.schedule), replays it in SimGrid and returns the per-rank split. One call per
// process (SimGrid allows one Engine per process).
#pragma once

#include "vocabulary/plan.hpp"
#include "simulator/engine/replay_count.hpp"
#include "simulator/engine/sim_result.hpp"

namespace stepsim {

// Most SimGrid activities a replay may run: a full 16,384-GPU DeepSeek-V3 step (about 1.2e8, 8x
// the 2048-GPU step's 1.5e7, which takes about 1 GiB and 2-3 minutes on a CI core) with some
// room; more runs for hours.
inline constexpr double kMaxReplayActivities = 1.5e8;

// The replay-size guard (simulate, compare and calibrate call it before any output is opened or
// any replay runs): counts what the replay will run (engine::count_replay over the workload the
// replay builds) and throws ConfigError, naming the key and the --set that bears on it, when it
// passes `limit` (kMaxReplayActivities; tests ask about smaller ones). Returns the count, for
// SimOptions::counted.
engine::ReplayCount check_replay_size(const Plan& plan, double limit = kMaxReplayActivities);

SimResult simulate(const Plan& plan, const SimOptions& options = {});

}  // namespace stepsim
