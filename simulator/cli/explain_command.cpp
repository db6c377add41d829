// `stepsim explain [CONFIG]`: the roofline-to-reality waterfall (simulator/calibration/explain.hpp)
// as a table, JSON, and optionally a PNG.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "simulator/calibration/explain.hpp"
#include "simulator/cli/commands.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/plot/chart.hpp"
#include "simulator/roofline/roofline.hpp"

namespace stepsim {

int run_explain(const Plan& plan, bool json, bool quiet, const std::string& png_path, bool routing_sim) {
  if (!png_path.empty()) io::check_output_path(png_path, "--png", io::kDashBinary);  // before the simulations, not after
  int n = 0;
  const calib::Explanation x = calib::explain(plan, [&](const Plan& p) {
    if (!quiet) std::fprintf(stderr, "explain: simulation %d ...\n", ++n);
    return calib::simulate_in_child(p);
  }, routing_sim);
  if (!png_path.empty()) {
    plot::WaterfallChart chart;
    chart.title = fmt::format("{}: speed of light to reality ({} GPUs)", plan.model.name, plan.gpus());
    chart.y_label = "step time (s)";
    if (x.reported_step_s > 0) {
      chart.reference = x.reported_step_s;
      chart.reference_label = fmt::format("{} {:.1f} s", reported_step_label(plan), x.reported_step_s);
    }
    for (const auto& s : x.steps) {
      const auto kind = s.kind == calib::WaterfallStep::Kind::Total       ? plot::WaterfallBar::Kind::Total
                        : s.kind == calib::WaterfallStep::Kind::Unexplained ? plot::WaterfallBar::Kind::Unexplained
                                                                           : plot::WaterfallBar::Kind::Step;
      chart.bars.push_back({s.effect, s.step_time_s, kind});
    }
    plot::write_waterfall_png(chart, png_path);
  }
  if (json) {
    nlohmann::json j;
    j["config"] = plan.source;
    for (const auto& s : x.steps)
      j["steps"].push_back({{"effect", s.effect}, {"step_time_s", s.step_time_s}, {"delta_s", s.delta_s},
                            {"how", s.how},
                            {"kind", s.kind == calib::WaterfallStep::Kind::Total ? "total"
                                     : s.kind == calib::WaterfallStep::Kind::Step ? "step"
                                                                                   : "unexplained"}});
    j["roofline_step_s"] = x.roofline_step_s;
    j["sol_sim_step_s"] = x.sol_sim_step_s;
    j["calibrated_sim_s"] = x.calibrated_sim_s;
    j["prediction_s"] = x.prediction_s;
    const bool reported = x.reported_step_s > 0;  // DeepSeek-V3's, or train.reported_step_s
    j["reported_step_s"] = reported ? nlohmann::json(x.reported_step_s) : nlohmann::json();
    j["unexplained_s"] = reported ? nlohmann::json(x.unexplained_s) : nlohmann::json();
    j["prediction_vs_reported"] = reported ? nlohmann::json(x.prediction_s / x.reported_step_s - 1) : nlohmann::json();
    std::cout << io::json_text(j, 2) << "\n";
    return 0;
  }
  std::string out = fmt::format("{}: from speed of light to the reported step\n\n", plan.source);
  out += fmt::format("{:<36} {:>9} {:>9}   {}\n", "effect", "+ s", "step s", "how");
  for (const auto& s : x.steps) {
    const bool total = s.kind != calib::WaterfallStep::Kind::Step;
    out += fmt::format("{:<36} {:>9} {:>9.3f}   {}\n", s.effect, total && s.kind == calib::WaterfallStep::Kind::Total ? "" : fmt::format("{:+.3f}", s.delta_s),
                       s.step_time_s, s.how);
  }
  out += fmt::format("\nclosed-form roofline {:.3f} s; simulated at speed of light {:.3f} s; {} {:.3f} s",
                     x.roofline_step_s, x.sol_sim_step_s,
                     plan.sim.compute == ComputeModel::Predicted ? "prediction of the per-op cost model" : "calibrated prediction",
                     x.prediction_s);
  if (x.reported_step_s > 0)
    out += fmt::format(" vs reported {:.3f} s ({:+.1f} %), unexplained {:.3f} s", x.reported_step_s,
                       100 * (x.prediction_s / x.reported_step_s - 1), x.unexplained_s);
  out += "\n";
  if (!png_path.empty()) out += fmt::format("wrote {}\n", png_path);
  std::cout << out;
  return 0;
}

}  // namespace stepsim
