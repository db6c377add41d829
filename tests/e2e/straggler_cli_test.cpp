// The binary with stragglers and jitter: byte-identical JSON for one seed, different draws for
// another, the stragglers report, and one-line errors with exit code 2 for bad items.
#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

using Result = stepsim::test::CliResult;

Result run(const std::string& args) { return stepsim::test::run_stepsim(args); }

const std::string kPipeline =
    "simulate --json --quiet --set workload.kind=synthetic --set schedule=1f1b --set parallel.pp=4 "
    "--set parallel.microbatches=8 --set workload.w_s=0 --set workload.send_bytes=1e9 ";

// The JSON without sim.wall_s, the one field that measures the machine rather than the step.
std::string without_wall(const std::string& out) {
  nlohmann::json j = nlohmann::json::parse(out);
  j["sim"].erase("wall_s");
  return j.dump();
}

TEST(StragglerCli, JitterIsReproducibleByteForByteAndFollowsTheSeed) {
  const std::string args = kPipeline + "--set scenario.jitter_sigma=0.2 --set 'scenario.stragglers=[{gpu: 1, clock: 0.9}]' ";
  const Result a = run(args + "--set scenario.seed=7");
  const Result b = run(args + "--set scenario.seed=7");
  const Result c = run(args + "--set scenario.seed=8");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_EQ(c.code, 0) << c.err;
  // Byte for byte, but for the wall time: that line is the only one allowed to differ.
  std::string la = a.out, lb = b.out;
  const auto strip_wall = [](std::string s) {
    const auto at = s.find("\"wall_s\"");
    if (at != std::string::npos) s.erase(at, s.find('\n', at) - at);
    return s;
  };
  EXPECT_EQ(strip_wall(la), strip_wall(lb));
  EXPECT_NE(without_wall(a.out), without_wall(c.out));
  const auto ja = nlohmann::json::parse(a.out), jc = nlohmann::json::parse(c.out);
  EXPECT_NE(ja["step_time_s"], jc["step_time_s"]);
  // The report compares with the same plan unperturbed: 1F1B with transfers, no jitter, same for both seeds.
  EXPECT_EQ(ja["stragglers"]["baseline_step_s"], jc["stragglers"]["baseline_step_s"]);
  EXPECT_EQ(ja["stragglers"]["jitter_sigma"], 0.2);
  EXPECT_EQ(ja["stragglers"]["configured"][0]["gpu"], 1);
}

TEST(StragglerCli, ReportShowsImpactAndWhoWaited) {
  const Result r = run(kPipeline + "--set 'scenario.stragglers=[{gpu: 3, clock: 0.8}]'");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out)["stragglers"];
  for (const char* key : {"configured", "jitter_sigma", "baseline_step_s", "step_impact_s", "slowdown", "waited_for",
                          "root_causes", "rank_waits", "nic_detours", "rerouted_bytes"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_GT(j["step_impact_s"].get<double>(), 0);
  EXPECT_EQ(j["root_causes"][0]["gpu"], 3);
  // Without stragglers there is no baseline to compare with.
  const Result plain = run(kPipeline);
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_TRUE(nlohmann::json::parse(plain.out)["stragglers"]["baseline_step_s"].is_null());
}

TEST(StragglerCli, BadItemIsOneLineAndExitCode2) {
  const Result r = run("simulate --quiet --set 'scenario.stragglers=[{gpu: 5, clock: 0.8}, {gpu: 6, clock: 0}]'");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("scenario.stragglers[1].clock"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
}

}  // namespace
