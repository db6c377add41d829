// `stepsim calibrate REAL_TRACE.json [CONFIG] -o PROFILE.yaml`: derives a hardware profile from a
// profiler capture, writes it, and checks it by simulating the capture scenario with it.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "simulator/calibration/calibrate.hpp"
#include "simulator/cli/commands.hpp"
#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"
#include "simulator/io/json_text.hpp"
#include "simulator/io/output_file.hpp"
#include "simulator/runs/simulate.hpp"

namespace stepsim {

int run_calibrate(const std::string& trace_path, const Plan& plan, const std::string& out_path, bool json,
                  bool quiet) {
  calib::require_capture(plan, "calibrate");
  if (out_path.empty()) throw ConfigError("calibrate: -o: missing; name the profile file to write, e.g. -o profile.yaml");
  io::check_output_path(out_path, "-o", io::kDashStdoutTaken);
  // Every input is read and checked before the output is touched; the profile is written to a
  // temporary file renamed over -o, so a failure never empties an existing profile.
  const traces::ProfileSummary trace = traces::read_profile_trace(trace_path);
  const calib::Calibration c = calib::calibrate(trace, plan);
  const std::string profile = calib::profile_yaml(c, trace_path);
  try {
    check_hardware_profile(profile, trace_path);
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(e.what()) + " (derived by calibrate; the trace does not look like the capture "
                      "scenario, see README \"Calibration\")");
  }
  // The check: the capture simulated with the profile, against the trace (its size guarded, and
  // counted once for the progress line, before the profile is written).
  Plan checked = plan;
  checked.hardware = c.hardware;
  checked.software = c.software;
  SimOptions options;
  options.counted = check_replay_size(checked);
  io::write_output_file(out_path, "-o", io::kDashStdoutTaken, profile);
  options.quiet = quiet;
  options.record_spans = true;
  const calib::PhaseMap sim = calib::capture_sim(checked, simulate(checked, options));
  const calib::PhaseMap real = calib::capture_real(trace);
  if (json) {
    nlohmann::json j;
    j["profile"] = out_path;
    j["compute"] = to_string(c.model);
    j["hardware"]["comm_sms"] = c.hardware.comm_sms;
    for (const auto& [key, value] : calib::derived_keys(c)) {
      if (key.rfind("software.", 0) == 0) j["software"][key.substr(9)] = value;
      else j["hardware"][key] = value;
    }
    for (const auto& p : calib::phase_names())
      j["check"][p] = {{"real_s", real.at(p)}, {"sim_s", sim.at(p)}, {"error", sim.at(p) / real.at(p) - 1}};
    std::cout << io::json_text(j, 2) << "\n";
    return 0;
  }
  std::string text = fmt::format("wrote {}\n\n", out_path);
  for (const auto& [key, how] : c.derivation) text += fmt::format("  {}: {}\n", key, how);
  text += fmt::format("\ncheck: {} simulated with the profile, per layer\n", plan.source);
  text += fmt::format("{:<8} {:>10} {:>10} {:>8}\n", "phase", "real ms", "sim ms", "error");
  for (const auto& p : calib::phase_names())
    text += fmt::format("{:<8} {:>10.3f} {:>10.3f} {:>+7.1f}%\n", p, real.at(p) * 1e3, sim.at(p) * 1e3,
                        100 * (sim.at(p) / real.at(p) - 1));
  std::cout << text;
  return 0;
}

}  // namespace stepsim
