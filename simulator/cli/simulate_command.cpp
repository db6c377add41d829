#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <fstream>
#include <iostream>

#include "simulator/cli/commands.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/report/command_json.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/trace_selection.hpp"
#include "simulator/runs/simulate.hpp"
#include "simulator/report/memory_report.hpp"
#include "simulator/report/rank_ranges.hpp"
#include "simulator/report/routing_report.hpp"
#include "simulator/runs/mean_load_step.hpp"
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
  TraceOptions trace_opt = trace_options(plan, trace_ranks, trace_window);  // a bad option fails before the count
  options.counted = check_replay_size(plan);
  if (trace_ranks.empty()) trace_opt.ranks = default_trace_options(plan, options.counted->simulated).ranks;
  options.span_ranks = trace_opt.ranks;  // record only what the trace will hold
  // Created before the replay so a bad path fails before minutes of work; the trace reaches
  // trace_path only when complete (a temporary file renamed over it).
  std::optional<io::OutputFile> trace;
  if (!trace_path.empty()) trace.emplace(trace_path, "--trace", io::kDashStdoutTaken);
  // Uneven routing: first the same step with every expert at its mean load, for the slowdown
  // (forked before this process starts its own SimGrid engine).
  const std::optional<double> mean_load_s = mean_load_step_s(plan, quiet);
  const SimResult result = simulate(plan, options);
  if (trace) {
    write_chrome_trace(result, trace_opt, trace->stream());
    trace->commit();
    if (!quiet && trace_opt.window_begin_s > result.step_time_s)
      std::cerr << "stepsim: note: --trace-window starts at " << trace_opt.window_begin_s << " s, after the step ends ("
                << result.step_time_s << " s); the trace holds no ops\n";
    // A reduced replay plays one GPU per symmetric group: say which requested GPUs have no events.
    const auto simulated = [&result](int32_t g) {
      return std::any_of(result.ranks.begin(), result.ranks.end(), [g](const RankResult& r) { return r.rank == g; });
    };
    std::vector<int64_t> missing;  // one note for all of them, however many
    for (const int32_t g : trace_opt.ranks)
      if (!simulated(g)) missing.push_back(g);
    if (!quiet && !missing.empty())
      std::cerr << "stepsim: note: GPU" << (missing.size() > 1 ? "s " : " ") << rank_ranges(missing) << " not simulated ("
                << result.mode.substr(0, result.mode.find(':'))
                << " mode; --set sim.mode=full replays every GPU); the trace has no events for "
                << (missing.size() > 1 ? "them" : "it") << "\n";
  }
  if (json) {
    std::cout << io::json_text(simulate_command_json(plan, result, mean_load_s), 2) << "\n";
  } else {
    // A synthetic pipeline has no model to roofline; its report compares against nothing.
    const bool model = plan.workload.kind == WorkloadKind::Model;
    std::cout << sim_text(plan, result, model ? compute_roofline(plan) : Roofline{})
              << routing_text(plan, result, mean_load_s);
  }
  if (strict && !memory_fits(plan, result)) {
    const RankResult* peak = memory_peak_rank(result);
    // One unit in one line: the capacity is given in GiB, so the peak is too.
    std::cerr << fmt::format("stepsim: the plan does not fit: GPU {} peaks at {:.2f} GiB, over hardware.memory_GiB {:g} "
                             "GiB (--strict)\n",
                             peak->rank, peak->memory.peak_bytes / (1024.0 * 1024.0 * 1024.0), plan.hardware.memory_GiB);
    return kPlanDoesNotFitExit;
  }
  return 0;
}

}  // namespace stepsim
