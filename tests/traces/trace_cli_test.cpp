// `stepsim simulate --trace` end to end on a small synthetic pipeline: the options reach the file,
// and bad selections are one error line with exit code 2.
#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

using Result = stepsim::test::CliResult;

Result run(const std::string& args) { return stepsim::test::run_stepsim(args); }

// Four pipeline ranks of 1 s forward chunks, one GPU per node (the synthetic platform).
const std::string kSynthetic =
    "simulate --quiet --set workload.kind=synthetic --set schedule=1f1b --set parallel.pp=4 "
    "--set parallel.microbatches=4 --set workload.f_s=1 --set workload.b_s=2 --set workload.w_s=1 "
    "--set workload.send_bytes=1e6";

TEST(TraceCli, RanksAndWindowReachTheFile) {
  const std::string path = stepsim::test::process_scratch().file("trace_cli.json");
  const Result r = run(kSynthetic + " --trace " + path + " --trace-ranks 1-2 --trace-window 2:5");
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  size_t ops = 0;
  for (const auto& e : j.at("traceEvents")) {
    const int64_t pid = e.at("pid");
    EXPECT_TRUE(pid == 1 || pid == 2) << e.dump();
    if (e["ph"] != "X") continue;
    ++ops;
    const double a = e["ts"].get<double>() * 1e-6, b = a + e["dur"].get<double>() * 1e-6;
    EXPECT_TRUE(b >= 2 - 1e-9 && a <= 5 + 1e-9) << e.dump();
  }
  EXPECT_GT(ops, 0u);
}

// The synthetic step is (m + PP - 1)(F + B) = 7 x 3 = 21 s plus the 1 MB sends: a window from
// 100 s holds nothing, and the run says so (a note, not an error: the selection is valid, empty).
TEST(TraceCli, WindowPastTheStepsEndSaysSo) {
  const std::string path = stepsim::test::process_scratch().file("late_window.json");
  std::string loud = kSynthetic;
  loud.erase(loud.find("--quiet "), 8);
  const Result r = run(loud + " --trace " + path + " --trace-window 100:200");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("--trace-window starts at 100 s, after the step ends (21."), std::string::npos) << r.err;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  for (const auto& e : j.at("traceEvents")) EXPECT_NE(e["ph"], "X") << e.dump();
  // A window inside the step: no such note.
  const Result inside = run(loud + " --trace " + path + " --trace-window 2:5");
  ASSERT_EQ(inside.code, 0) << inside.err;
  EXPECT_EQ(inside.err.find("after the step ends"), std::string::npos) << inside.err;
}

void expect_one_error_line(const Result& r, const std::string& what) {
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

TEST(TraceCli, BadSelectionsAreOneErrorLine) {
  const std::string path = stepsim::test::process_scratch().file("unused.json");
  expect_one_error_line(run(kSynthetic + " --trace " + path + " --trace-ranks 7"), "--trace-ranks");
  expect_one_error_line(run(kSynthetic + " --trace " + path + " --trace-window 5:2"), "--trace-window");
  expect_one_error_line(run(kSynthetic + " --trace-ranks 0"), "--trace FILE.json");
  expect_one_error_line(run(kSynthetic + " --trace /no/such/dir/t.json"), "/no/such/dir/t.json");
}

}  // namespace

// A straggler's replay runs the EP groups holding it (GPU 5's: 5, 21, 37, 53 on Llama 3.1 8B's
// 4 stages of 16 single-GPU groups), not replica 0: the default trace records those GPUs, in the
// places (pipeline ranks) replica 0 would have held, instead of GPUs the replay never ran (the
// trace held no event before).
TEST(TraceCli, AStragglersTraceHoldsTheGpusItsReplayRuns) {
  const std::string path = stepsim::test::process_scratch().file("straggler_trace.json");
  const Result r = run("simulate workloads/llama-3.1-8b.yaml -q --set 'scenario.stragglers=[{gpu: 5, clock: 0.8}]' "
                       "--trace " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["otherData"]["ranks"], nlohmann::json::parse("[5, 21, 37, 53]"));
  // Each track is named "GPU <id> <stream>" by its thread_name event.
  std::map<std::pair<int64_t, int64_t>, int64_t> gpu_of_track;
  for (const auto& e : j.at("traceEvents"))
    if (e["ph"] == "M" && e["name"] == "thread_name")
      gpu_of_track[{e["pid"], e["tid"]}] = std::stoll(e["args"]["name"].get<std::string>().substr(4));
  std::map<int64_t, size_t> ops;
  for (const auto& e : j.at("traceEvents"))
    if (e["ph"] == "X") ++ops[gpu_of_track.at({e["pid"], e["tid"]})];
  for (const int64_t gpu : {5, 21, 37, 53}) EXPECT_GT(ops[gpu], 100u) << gpu;
}
