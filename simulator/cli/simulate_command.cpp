#include <fstream>
#include <iostream>

#include "simulator/cli/commands.hpp"
#include "simulator/config/config_error.hpp"
#include "traces/chrome_trace.hpp"
#include "simulator/engine/simulate.hpp"
#include "simulator/report/sim_report.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

int run_simulate(const Plan& plan, bool json, bool quiet, const std::string& trace_path) {
  SimOptions options;
  options.quiet = quiet;
  options.record_spans = !trace_path.empty();
  std::ofstream trace;
  if (!trace_path.empty()) {
    trace.open(trace_path);  // open first: a bad path fails before a long replay
    if (!trace) throw ConfigError(trace_path + ": cannot write the trace file; check the path (--trace)");
  }
  const SimResult result = simulate(plan, options);
  if (trace.is_open()) write_chrome_trace(result, trace);
  // A synthetic pipeline has no model to roofline; its report compares against nothing.
  const bool model = plan.workload.kind == WorkloadKind::Model;
  const Roofline roof = model ? compute_roofline(plan) : Roofline{};
  if (json) {
    auto j = sim_json(plan, result, roof);
    if (!model) j["roofline"] = nullptr;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << sim_text(plan, result, roof);
  }
  return 0;
}

}  // namespace stepsim
