// Which GPUs and which time window a trace holds: a 2048-GPU step as one Chrome trace would not
// open, so by default only one GPU per pipeline stage is recorded (see default_trace_options).
#pragma once

#include <string>
#include <vector>

#include "vocabulary/plan.hpp"
#include "traces/chrome_trace.hpp"

namespace stepsim {

// The plan's node size, and by default data-parallel replica 0 of every pipeline rank (GPUs
// 0, dp, 2 dp, ...: the GPUs a reduced replay simulates, one per stage); ZeRO-3 (FSDP) plans: the
// GPUs of node 0; the synthetic workload: every GPU. `simulated` (per GPU, engine::ReplayCount;
// empty: every GPU) is what the replay runs: a default GPU it leaves out (a straggler's replay runs
// the straggler's groups) gives way to the one at its place (pipeline rank, TP and CP rank) in the
// first data-parallel replica it runs, so the default never records nothing.
TraceOptions default_trace_options(const Plan& plan, const std::vector<bool>& simulated = {});

// Applies --trace-ranks ("0-7,64"; empty keeps the default) and --trace-window ("1.0:2.5"
// seconds, either side may be empty; empty keeps the whole step). ConfigError names the option.
TraceOptions trace_options(const Plan& plan, const std::string& ranks, const std::string& window);

}  // namespace stepsim
