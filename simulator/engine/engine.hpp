// Replays a workload in SimGrid: per GPU one actor driving its streams (stream 0 computes, the
// others communicate), ops in stream order, dependencies as completion counters, transfers as
// mailbox put/get pairs. SimGrid allows one Engine per process: call this once per process.
#pragma once

#include "platforms/cluster_platform.hpp"
#include "simulator/engine/sim_result.hpp"
#include "vocabulary/workload.hpp"

namespace stepsim::engine {

// `spec` is the platform the workload's GPU ids refer to.
SimResult run(const PlatformSpec& spec, const ops::Workload& workload, const SimOptions& options);

}  // namespace stepsim::engine
