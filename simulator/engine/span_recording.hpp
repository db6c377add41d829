// Trace-only bookkeeping, active for the GPUs a trace wants (GpuState::record): each op's span
// with its work, the communication -> compute dependencies that become flow arrows, and the
// compute stream's idle time split into bubble and exposed communication exactly as RankResult
// splits it. Nothing here runs when no trace was asked for.
#pragma once

#include "simulator/engine/engine_state.hpp"

namespace stepsim::engine {

// Op `op` of `stream` ran from `start` to `end` (engine clock).
void record_span(EngineState& e, const GpuState& g, int stream, const FetchedOp& op, double start, double end);

// The compute stream idled from t0 to t1 waiting for its next op's deps; g.watched_by_class holds
// the communication it waited on.
void record_wait(EngineState& e, GpuState& g, double t0, double t1);

// After the compute stream's last op: the GPU's trailing collectives (exposed, reported as dp)
// and bubble until the step ends at `step_end`.
void record_tail(EngineState& e, GpuState& g, double step_end);

}  // namespace stepsim::engine
