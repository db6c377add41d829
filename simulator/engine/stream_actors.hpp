// The two kinds of stream actors: the compute stream (Execs, and the split of its idle time into
// exposed communication and bubble) and a communication stream (transfers, SM tax).
#pragma once

#include <simgrid/s4u/Semaphore.hpp>

#include "simulator/engine/engine_state.hpp"

namespace stepsim::engine {

void run_compute_stream(EngineState& e, GpuState& g, simgrid::s4u::Semaphore* wake);
void run_comm_stream(EngineState& e, GpuState& g, int stream, simgrid::s4u::Semaphore* wake);

}  // namespace stepsim::engine
