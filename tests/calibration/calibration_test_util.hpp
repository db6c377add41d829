// Helpers for the calibration tests: the stepsim binary run as a child, the shipped files, and the
// DeepSeek capture's per-layer phases as SUMMARY.md states them (independent of stepsim's reader).
#pragma once

#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace stepsim::test {

inline std::string source_path(const std::string& rel) { return std::string(STEPSIM_SOURCE_DIR) + "/" + rel; }
inline std::string capture_yaml() { return source_path("workloads/deepseek-profile-capture.yaml"); }
inline std::string calibrated_profile() { return source_path("workloads/hardware/h800-calibrated.yaml"); }
// The capture under the speed-of-light model, which h800-calibrated.yaml's efficiencies belong to
// (the capture config runs the predicted model by default).
inline const char* kSpeedOfLight = "sim.compute=speed-of-light";

// DeepSeek's train.json: the test copy if the tree has it, else the shared reference.
inline std::string train_json() {
  const std::string local = source_path("tests/data/deepseek-train.json");
  if (std::filesystem::exists(local)) return local;
  return std::string(STEPSIM_SHARED_DIR) + "/reference/deepseek-profile/train.json";
}

// SUMMARY.md, "GPU timeline per layer-pair (mean of 4; ms)": compute-stream spans per phase,
// comm-stream spans under each; per layer, in seconds.
inline std::map<std::string, double> summary_phases_s() {
  return {{"F", (4.60 + 4.64) * 1e-3},       // attn(F) + mlp(F)
          {"B", (5.36 + 9.54) * 1e-3},       // mlp(B) + attn(B)
          {"W", (5.07 + 2.40) * 1e-3},       // mlp(W) + attn(W)
          {"comm_F", (6.74 + 8.70) * 1e-3},  // dispatch(F) + combine(F)
          {"comm_B", (5.78 + 7.56) * 1e-3}}; // combine(B) + dispatch(B)
}

using RunResult = CliResult;


}  // namespace stepsim::test
