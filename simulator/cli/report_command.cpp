// `stepsim report [CONFIG] -o REPORT.html`: replays the step with every op recorded for the GPUs the
// page draws, runs explain's waterfall replays (each in a forked child, before this process starts
// its own SimGrid engine), and writes one self-contained HTML page (simulator/report/html_report.hpp).
#include <cstdio>
#include <optional>
#include <sstream>

#include "simulator/calibration/child_simulation.hpp"
#include "simulator/calibration/explain.hpp"
#include "simulator/cli/commands.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/runs/simulate.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/report/html_report.hpp"
#include "simulator/roofline/roofline.hpp"
#include "traces/trace_selection.hpp"

namespace stepsim {

int run_report(const Plan& plan, const ReportArgs& a) {
  if (a.out_path.empty()) throw ConfigError("-o: missing; give the HTML file to write, for example -o report.html");
  io::check_output_path(a.out_path, "-o", io::kDashIsStdout);  // before minutes of replays, not after
  const engine::ReplayCount counted = check_replay_size(plan);
  const bool model = plan.workload.kind == WorkloadKind::Model;

  std::optional<calib::Explanation> waterfall;
  std::string waterfall_note;
  if (!model) {
    waterfall_note = "No waterfall: the synthetic workload has no speed of light to start from.";
  } else if (!a.waterfall) {
    waterfall_note = "No waterfall: --no-waterfall (stepsim explain draws it).";
  } else {
    int n = 0;
    waterfall = calib::explain(plan, [&](const Plan& p) {
      if (!a.quiet) std::fprintf(stderr, "stepsim report: waterfall replay %d ...\n", ++n);
      return calib::simulate_in_child(p);
    }, a.routing_sim);
    if (!a.routing_sim && plan.scenario.routing == Routing::Balanced)
      waterfall_note = "Its routing-imbalance bar was not replayed (add --routing-sim; minutes on large plans).";
  }

  const TraceOptions timeline = default_trace_options(plan, counted.simulated);
  SimOptions options;
  options.quiet = a.quiet;
  options.record_spans = true;
  options.span_ranks = timeline.ranks;  // the GPUs the timeline, memory and layer charts draw
  options.counted = counted;
  const SimResult result = simulate(plan, options);
  const Roofline roof = model ? compute_roofline(plan) : Roofline{};

  HtmlReportInput in;
  in.plan = &plan;
  in.result = &result;
  in.roofline = model ? &roof : nullptr;
  in.waterfall = waterfall ? &*waterfall : nullptr;
  in.waterfall_note = waterfall_note;
  in.timeline_gpus = timeline.ranks;
  in.command = a.command;
  in.version = a.version;
  std::ostringstream page;
  write_html_report(in, page);
  const std::string html = page.str();
  io::write_output_file(a.out_path, "-o", io::kDashIsStdout, html);
  if (!a.quiet)
    std::fprintf(stderr, "stepsim report: wrote %s (%.1f MB); open it in a browser (it needs no network)\n",
                 io::is_stdout(a.out_path) ? "the page to stdout" : a.out_path.c_str(), double(html.size()) / 1e6);
  return 0;
}

}  // namespace stepsim
