// Chrome / Perfetto trace export of a simulated step: one process per GPU, one thread per stream,
// one complete ("X") event per op. Open the file in ui.perfetto.dev or chrome://tracing.
#pragma once

#include <ostream>

#include "simulator/engine/sim_result.hpp"

namespace stepsim {

// Needs a result run with SimOptions::record_spans. Times are written in microseconds.
void write_chrome_trace(const SimResult& result, std::ostream& out);

}  // namespace stepsim
