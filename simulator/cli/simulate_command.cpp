#include <algorithm>
#include <fstream>
#include <iostream>

#include "simulator/cli/commands.hpp"
#include "simulator/config/config_error.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/trace_selection.hpp"
#include "simulator/engine/simulate.hpp"
#include "simulator/report/memory_report.hpp"
#include "simulator/report/routing_report.hpp"
#include "simulator/report/sim_report.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

int run_simulate(const Plan& plan, bool json, bool quiet, const std::string& trace_path,
                 const std::string& trace_ranks, const std::string& trace_window, bool strict) {
  if (trace_path.empty() && !(trace_ranks.empty() && trace_window.empty()))
    throw ConfigError("--trace-ranks / --trace-window select what --trace writes; add --trace FILE.json");
  SimOptions options;
  options.quiet = quiet;
  options.record_spans = !trace_path.empty();
  const TraceOptions trace_opt = trace_options(plan, trace_ranks, trace_window);
  options.span_ranks = trace_opt.ranks;  // record only what the trace will hold
  std::ofstream trace;
  if (!trace_path.empty()) {
    trace.open(trace_path);  // open first: a bad path fails before a long replay
    if (!trace) throw ConfigError(trace_path + ": cannot write the trace file; check the path (--trace)");
  }
  // Uneven routing: first the same step with every expert at its mean load, for the slowdown
  // (forked before this process starts its own SimGrid engine).
  const std::optional<double> mean_load_s = mean_load_step_s(plan, quiet);
  const SimResult result = simulate(plan, options);
  if (trace.is_open()) {
    write_chrome_trace(result, trace_opt, trace);
    // A reduced replay plays one GPU per symmetric group: say which requested GPUs have no events.
    const auto simulated = [&result](int32_t g) {
      return std::any_of(result.ranks.begin(), result.ranks.end(), [g](const RankResult& r) { return r.rank == g; });
    };
    for (const int32_t g : trace_opt.ranks)
      if (!quiet && !simulated(g))
        std::cerr << "stepsim: note: GPU " << g << " was not simulated (" << result.mode
                  << "); the trace has no events for it\n";
  }
  // A synthetic pipeline has no model to roofline; its report compares against nothing.
  const bool model = plan.workload.kind == WorkloadKind::Model;
  const Roofline roof = model ? compute_roofline(plan) : Roofline{};
  if (json) {
    auto j = sim_json(plan, result, roof);
    if (!model) j["roofline"] = nullptr;
    if (model) j["routing"] = routing_json(plan, result, mean_load_s);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << sim_text(plan, result, roof) << routing_text(plan, result, mean_load_s);
  }
  if (strict && !memory_fits(plan, result)) {
    const RankResult* peak = memory_peak_rank(result);
    std::cerr << "stepsim: the plan does not fit: GPU " << peak->rank << " peaks at " << peak->memory.peak_bytes / 1e9
              << " GB, over hardware.memory_GiB " << plan.hardware.memory_GiB << " GiB (--strict)\n";
    return kPlanDoesNotFitExit;
  }
  return 0;
}

}  // namespace stepsim
