// The stepsim binary end to end: documented JSON keys, clean stdout, progress on stderr,
// reproducible output, and the platform file the generator writes.
#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

using Result = stepsim::test::CliResult;

Result run(const std::string& args) { return stepsim::test::run_stepsim(args); }

TEST(Cli, RooflineJsonHasTheDocumentedKeys) {
  const Result r = run("roofline --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"compute_s", "ep_comm_s", "pp_comm_s", "dp_comm_s", "bubble_s", "exposed_comm_s",
                          "step_time_s", "tokens_per_s_per_gpu", "remote_nodes", "mfu", "achieved_tflops_per_gpu",
                          "peak_tflops", "reported_step_s"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"matmul_fp8_s", "matmul_bf16_s", "attention_s", "recompute_s"})
    EXPECT_TRUE(j["terms"].contains(key)) << key;
  EXPECT_FALSE(j.contains("fsdp_per_microbatch_s"));  // ZeRO-1 plan
  const auto fsdp = nlohmann::json::parse(
      run("roofline --json --set schedule=fsdp --set parallel.split_lone_chunks=false --set parallel.pp=1 --set parallel.zero=3 --set parallel.microbatches=8")
          .out);
  EXPECT_TRUE(fsdp.contains("fsdp_per_microbatch_s"));
}

TEST(Cli, SimulateJsonIsCleanAndComplete) {
  const Result r = run("simulate --json --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // --quiet: nothing on stderr
  const auto j = nlohmann::json::parse(r.out);  // stdout is one JSON object, nothing else
  for (const char* key : {"step_time_s", "compute_s", "exposed_comm_s", "bubble_s", "ep_comm_s", "pp_comm_s",
                          "dp_comm_s", "ranks", "roofline", "mfu", "achieved_tflops_per_gpu"})
    EXPECT_TRUE(j.contains(key)) << key;
  for (const char* key : {"activities", "wall_s", "mode"}) EXPECT_TRUE(j["sim"].contains(key)) << key;
  ASSERT_FALSE(j["ranks"].empty());
  for (const auto& rank : j["ranks"])
    for (const char* key : {"rank", "step_time_s", "compute_s", "exposed_comm_s", "bubble_s"})
      EXPECT_TRUE(rank.contains(key)) << key;
  EXPECT_DOUBLE_EQ(j["roofline"]["step_time_s"].get<double>(),
                   nlohmann::json::parse(run("roofline --json").out)["step_time_s"].get<double>());
}

TEST(Cli, SameInputGivesTheSameOutput) {
  // Wall time is the only field that may differ between two runs.
  const std::string args = "simulate --json --quiet --set scenario.routing=deepseek --set scenario.seed=11 --set scenario.routing_samples=20000";
  auto a = nlohmann::json::parse(run(args).out);
  auto b = nlohmann::json::parse(run(args).out);
  a["sim"].erase("wall_s");
  b["sim"].erase("wall_s");
  EXPECT_EQ(a.dump(), b.dump());
  const Result t1 = run("roofline --set scenario.routing=deepseek"), t2 = run("roofline --set scenario.routing=deepseek");
  EXPECT_EQ(t1.out, t2.out);
}

TEST(Cli, LongRunsReportProgressOnStderr) {
  // The FSDP replay takes several seconds: progress lines (simulated time, share, ETA) go to
  // stderr while stdout stays pure JSON.
  const Result r = run("simulate --json --set schedule=fsdp --set parallel.split_lone_chunks=false --set parallel.pp=1 --set parallel.zero=3 "
                    "--set parallel.microbatches=8");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::accept(r.out));
  EXPECT_NE(r.err.find("simulated"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ETA"), std::string::npos) << r.err;
}

TEST(Cli, PlatformCommandWritesTheCommittedFile) {
  const std::string path = stepsim::test::process_scratch().file("platform.xml");
  ASSERT_EQ(run("platform -o " + path).code, 0);
  std::ifstream a(path), b(std::string(STEPSIM_SOURCE_DIR) + "/platforms/h800-256x8.xml");
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  EXPECT_FALSE(sa.str().empty());
  EXPECT_EQ(sa.str(), sb.str());
}

TEST(Cli, BadInputIsOneLineAndExitTwo) {
  const Result r = run("simulate --set parallel.pp=7");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("parallel.pp"), std::string::npos) << r.err;
}

}  // namespace
