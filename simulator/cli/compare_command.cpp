// `stepsim compare REAL_TRACE.json [CONFIG]`: a real profiler capture against the speed-of-light
// model and the simulation of the same scenario, per layer and phase (the seed's "Comparing against
// the DeepSeek trace" tables).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "simulator/calibration/capture_phases.hpp"
#include "simulator/cli/commands.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/runs/simulate.hpp"

namespace stepsim {
namespace {

const char* phase_label(const std::string& p) {
  if (p == "F") return "forward (F)";
  if (p == "B") return "input gradient (B)";
  if (p == "W") return "weight gradient (W)";
  if (p == "comm_F") return "all-to-all under F";
  return "all-to-all under B";
}

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace

int run_compare(const std::string& trace_path, const Plan& plan, bool json, bool quiet) {
  calib::require_capture(plan, "compare");
  const engine::ReplayCount counted = check_replay_size(plan);
  const traces::ProfileSummary trace = traces::read_profile_trace(trace_path);
  const calib::PhaseMap real = calib::capture_real(trace);
  const calib::CaptureSol sol = calib::capture_sol(plan);
  SimOptions options;
  options.quiet = quiet;
  options.record_spans = true;
  options.counted = counted;
  const calib::PhaseMap sim = calib::capture_sim(plan, simulate(plan, options));

  if (json) {
    nlohmann::json j;
    j["trace"] = trace_path;
    j["config"] = plan.source;
    j["layers"] = trace.layers;
    j["kernels"] = trace.kernels;
    j["unknown_kernels"] = trace.unknown_kernels;
    for (const auto& p : calib::phase_names()) {
      j["phases"][p] = {{"real_s", real.at(p)}, {"sol_s", sol.phase_s.at(p)}, {"sim_s", sim.at(p)}};
      j["ratios"][p] = {{"real_over_sol", ratio(real.at(p), sol.phase_s.at(p))},
                        {"sim_over_real", ratio(sim.at(p), real.at(p))}};
    }
    for (const auto& [phase, classes] : trace.phase_class_s)
      for (const auto& [cls, s] : classes) j["real_classes"][phase][cls] = s / double(trace.layers);
    for (const auto& [phase, classes] : sol.class_s)
      for (const auto& [cls, s] : classes) j["sol_classes"][phase][cls] = s;
    std::cout << io::json_text(j, 2) << "\n";
    return 0;
  }
  std::string out = fmt::format("{} ({} layer pairs, {} kernels, {} unclassified) vs {}\n\n", trace_path, trace.layers,
                                trace.kernels, trace.unknown_kernels, plan.source);
  out += fmt::format("{:<22} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "per layer", "real ms", "SOL ms", "sim ms",
                     "real/SOL", "sim/real");
  for (const auto& p : calib::phase_names())
    out += fmt::format("{:<22} {:>10.3f} {:>10.3f} {:>10.3f} {:>8.2f}x {:>8.2f}x\n", phase_label(p), real.at(p) * 1e3,
                       sol.phase_s.at(p) * 1e3, sim.at(p) * 1e3, ratio(real.at(p), sol.phase_s.at(p)),
                       ratio(sim.at(p), real.at(p)));
  out += "\nreal: each phase's wall span in the trace / layer pairs; SOL: the speed-of-light model of the same kernels\n"
         "(no efficiency, non-matmul work or SM tax); sim: `stepsim simulate` of the config's capture.\n";
  // Kernel classes, as the seed's kernel table groups them.
  out += fmt::format("\n{:<8} {:<16} {:>10}   {:<10} {:>10}\n", "phase", "trace class", "real ms", "SOL class", "SOL ms");
  for (const auto& [phase, classes] : trace.phase_class_s) {
    for (const auto& [cls, s] : classes) out += fmt::format("{:<8} {:<16} {:>10.3f}\n", phase, cls, s / double(trace.layers) * 1e3);
    const auto it = sol.class_s.find(phase);
    if (it != sol.class_s.end())
      for (const auto& [cls, s] : it->second) out += fmt::format("{:<8} {:<16} {:>10}   {:<10} {:>10.3f}\n", phase, "", "", cls, s * 1e3);
  }
  std::cout << out;
  return 0;
}

}  // namespace stepsim
