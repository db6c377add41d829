// compare, calibrate and explain end to end through the binary: JSON keys and values checked
// against the seed and SUMMARY.md, the waterfall's consistency with `simulate`, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/calibration/calibration_test_util.hpp"
#include "../scratch_dir.hpp"

namespace stepsim {
namespace {

using nlohmann::json;
using test::run_stepsim;

TEST(CompareCli, RealSolAndSimPerPhase) {
  const auto r = run_stepsim("compare " + test::train_json() + " --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["layers"], 4);
  for (const auto& [phase, real] : test::summary_phases_s()) {
    const json& p = j["phases"][phase];
    ASSERT_TRUE(p.contains("real_s") && p.contains("sol_s") && p.contains("sim_s")) << phase;
    // The reader's spans agree with SUMMARY.md's (rounded to 0.01 ms there).
    EXPECT_NEAR(p["real_s"].get<double>(), real, 0.01 * real) << phase;
    // The seed: real kernels and comms run 2.2-2.5x their speed of light (its W uses the span of
    // the concurrent weight-gradient kernels, as here); 2.0-2.6 allows for its normalisation to
    // 32,768 routed rows.
    const double ratio = p["real_s"].get<double>() / p["sol_s"].get<double>();
    EXPECT_GT(ratio, 2.0) << phase;
    EXPECT_LT(ratio, 2.6) << phase;
  }
}

TEST(CompareCli, TextTableNamesEveryPhase) {
  const auto r = run_stepsim("compare " + test::train_json() + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* label : {"forward (F)", "input gradient (B)", "weight gradient (W)", "all-to-all under F",
                            "all-to-all under B", "real/SOL"})
    EXPECT_NE(r.out.find(label), std::string::npos) << label;
}

TEST(CalibrateCli, WritesALoadableProfileThatReproducesTheTrace) {
  const std::string out = stepsim::test::process_scratch().file("profile.yaml");
  const auto r = run_stepsim("calibrate " + test::train_json() + " -o " + out + " --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  for (const auto& [phase, real] : test::summary_phases_s())
    EXPECT_NEAR(j["check"][phase]["sim_s"].get<double>(), real, 0.10 * real) << phase;
  const auto sim = run_stepsim("simulate " + test::capture_yaml() + " --set hardware.profile=" + out + " --json --quiet");
  EXPECT_EQ(sim.code, 0) << sim.err;
  std::filesystem::remove(out);
}

TEST(ExplainCli, WaterfallIsConsistentAndEndsAtTheReportedStep) {
  // The routing replay (a whole EP group per stage) takes minutes; its bar is checked by hand.
  const auto r = run_stepsim("explain --json --quiet --no-routing-sim");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  // 180K H800 GPU-hours per 1e12 tokens, 15360 x 4096 tokens per step on 2048 GPUs.
  const double reported = 180e3 * 3600 / 1e12 * 15360 * 4096 / 2048;
  EXPECT_NEAR(j["reported_step_s"].get<double>(), reported, 1e-6);
  const auto& steps = j["steps"];
  ASSERT_GE(steps.size(), 8u);
  double calibrated = -1, prev = 0;
  for (const auto& s : steps) {
    const std::string e = s["effect"];
    const double t = s["step_time_s"];
    // Effects that only add work or waiting never shorten the step.
    if (s["kind"] == "step" && e != "routing imbalance" && e != "MTP (depth 1)") EXPECT_GE(t, prev - 1e-9) << e;
    if (e == "calibrated simulation") calibrated = t;
    prev = t;
  }
  EXPECT_EQ(steps.back()["kind"], "unexplained");
  EXPECT_NEAR(steps.back()["step_time_s"].get<double>(), reported, 1e-6);
  EXPECT_NEAR(j["unexplained_s"].get<double>(), reported - j["prediction_s"].get<double>(), 1e-9);
  // The goal: the calibrated prediction within 25 % of the reported step (gap shown).
  EXPECT_NEAR(j["prediction_s"].get<double>(), reported, 0.25 * reported);
  // The waterfall's calibrated bar is `simulate` with the shipped profile.
  const auto sim = run_stepsim("simulate --set hardware.profile=" + test::calibrated_profile() + " --json --quiet");
  ASSERT_EQ(sim.code, 0) << sim.err;
  EXPECT_NEAR(calibrated, json::parse(sim.out)["step_time_s"].get<double>(), 1e-9);
}

TEST(ExplainCli, ADenseModelGetsTheModelNeutralWaterfall) {
  // Llama 3.1 8B (predicted, no EP): no DeepSeek/H800 profile, no SM tax, no routing bar; the
  // cost model's classes one at a time, and its last bar is `simulate`'s step.
  const std::string config = test::source_path("workloads/llama-3.1-8b.yaml");
  const auto r = run_stepsim("explain " + config + " --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  std::vector<std::string> effects;
  double predicted = -1, prev = 0;
  for (const auto& s : j["steps"]) {
    const std::string e = s["effect"];
    effects.push_back(e);
    EXPECT_EQ(e.find("SM tax"), std::string::npos) << e;
    EXPECT_NE(e, "routing imbalance");
    EXPECT_EQ(std::string(s["how"]).find("DeepSeek"), std::string::npos) << e << ": " << s["how"];
    if (s["kind"] == "step") EXPECT_GE(s["step_time_s"].get<double>(), prev - 1e-9) << e;
    if (e == "predicted simulation") predicted = s["step_time_s"];
    prev = s["step_time_s"];
  }
  for (const char* e : {"GEMM shapes and attention kernels", "memory-bound kernels", "kernel launches"})
    EXPECT_NE(std::find(effects.begin(), effects.end(), e), effects.end()) << e;
  EXPECT_TRUE(j["reported_step_s"].is_null());
  const auto sim = run_stepsim("simulate " + config + " --json --quiet --set sim.mode=reduced");
  ASSERT_EQ(sim.code, 0) << sim.err;
  EXPECT_NEAR(predicted, json::parse(sim.out)["step_time_s"].get<double>(), 1e-9);
}

// What explain's memory-bound bar says for QW-X-039 with one --set.
std::string memory_bound_how(const std::string& set) {
  const auto r = run_stepsim("explain " + test::source_path("workloads/published/QW-X-039.yaml") +
                             " --json --quiet --set " + set);
  EXPECT_EQ(r.code, 0) << r.err;
  const json j = json::parse(r.out);
  for (const auto& s : j["steps"])
    if (s["effect"] == "memory-bound kernels") return std::string(s["how"]);
  return std::string();
}

TEST(ExplainCli, TheMemoryBoundBarNamesThePagedStashWhereThePlanRunsIt) {
  const auto how = [](const std::string& stash) { return memory_bound_how("parallel.moe_paged_stash=" + stash); };
  EXPECT_NE(how("true").find("the paged stash's copies"), std::string::npos) << how("true");
  EXPECT_EQ(how("false").find("paged stash"), std::string::npos) << how("false");
}

// The same bar names the fused grouped MLP's epilogue bytes where the plan runs it (QW-X-039 does).
TEST(ExplainCli, TheMemoryBoundBarNamesTheFusedGroupedMlpsEpilogues) {
  const auto how = [](const std::string& fused) { return memory_bound_how("software.fused.grouped_mlp=" + fused); };
  EXPECT_NE(how("true").find("the fused grouped MLP's epilogues"), std::string::npos) << how("true");
  EXPECT_EQ(how("false").find("grouped MLP"), std::string::npos) << how("false");
}

TEST(CalibrationCli, BadInputIsOneLineAndExitCode2) {
  const auto missing = run_stepsim("compare /no/such/trace.json --quiet");
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("/no/such/trace.json"), std::string::npos) << missing.err;
  const auto not_capture = run_stepsim("compare " + test::train_json() + " " + test::source_path("workloads/deepseek-v3.yaml"));
  EXPECT_EQ(not_capture.code, 2);
  EXPECT_NE(not_capture.err.find("schedule"), std::string::npos) << not_capture.err;
  const auto no_output = run_stepsim("calibrate " + test::train_json());
  EXPECT_EQ(no_output.code, 2);
  const auto bad_dir = run_stepsim("calibrate " + test::train_json() + " -o /no/such/dir/p.yaml");
  EXPECT_EQ(bad_dir.code, 2);
  EXPECT_NE(bad_dir.err.find("/no/such/dir/p.yaml"), std::string::npos) << bad_dir.err;
  const auto bad_profile = run_stepsim("explain --profile /no/such/profile.yaml --quiet");
  EXPECT_EQ(bad_profile.code, 2);
  EXPECT_NE(bad_profile.err.find("hardware.profile"), std::string::npos) << bad_profile.err;
  for (const auto* r : {&missing, &not_capture, &bad_dir, &bad_profile})
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;
}

}  // namespace
}  // namespace stepsim
