// `stepsim search --emit-jobs FILE`: the replays as shell lines for a cluster (a Slurm array), on
// a space of Llama 3.1 8B plans small enough to count by hand; each line, run, stores the report
// the same search run again reads back (it replays none), and that search's outputs are a local
// search's, byte for byte. Hostile --emit-jobs values get one error line and write nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"
#include "tests/text_files.hpp"

namespace {

using stepsim::test::slurp;
using stepsim::test::lines_of;

namespace fs = std::filesystem;
using stepsim::test::run_shell;
using stepsim::test::run_stepsim;

const std::string kConfig = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";

std::string temp_dir(const std::string& name) {
  const std::string d = stepsim::test::process_scratch().file("jobs_" + name);
  fs::remove_all(d);
  return d;
}

// One node of 8 GPUs, memory that holds every plan. The space, by docs/search.md's rules: TP 1 and
// 2 (--only), CP 1 and PP 1 (--fix, --only), 1F1B (--only) with ZeRO 1 and 2, micro-batch sizes 1
// and 2 (--only), recompute none (--fix); the overlap options take their one value. 2 x 2 x 2 = 8
// plans; 1F1B at PP 1 runs any count of microbatches, so all 8 are valid, and all fit.
const std::string kTiny = "'" + kConfig + "' --gpus 8 --set hardware.memory_GiB=100000 --only parallel.tp=1,2 "
                          "--fix parallel.cp=1 --only parallel.pp=1 --only schedule=1f1b "
                          "--only parallel.micro_batch_size=1,2 --fix parallel.recompute=none";
constexpr int kTinyPlans = 2 * 2 * 2;

// Whether the config's own plan (at 8 GPUs) loads, so the search replays it beside the ranked ones
// and writes its line too: `stepsim roofline` on it.
int config_plan_lines() {
  const auto r = run_stepsim("roofline '" + kConfig + "' --set cluster.nodes=1 --set hardware.memory_GiB=100000 --json");
  if (r.code != 0) return 0;
  return nlohmann::json::parse(r.out)["memory"]["fits"].get<bool>() ? 1 : 0;
}

TEST(SearchJobs, OneLinePerReplayTheSearchCouldRun) {
  const int config_line = config_plan_lines();
  const std::string dir = temp_dir("count");
  // A cap below the candidates: the first 3 ranked; above them: every candidate.
  for (const int cap : {3, 100}) {
    const std::string jobs = dir + "_jobs_" + std::to_string(cap) + ".txt";
    const auto r = run_stepsim("search " + kTiny + " --max-replays " + std::to_string(cap) + " --emit-jobs '" + jobs +
                               "' -o '" + dir + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;  // no summary: nothing was replayed
    const auto lines = lines_of(slurp(jobs));
    EXPECT_EQ(int(lines.size()), std::min(cap, kTinyPlans) + config_line) << cap;
    EXPECT_NE(r.err.find("wrote " + std::to_string(lines.size()) + " job lines"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("SLURM_ARRAY_TASK_ID"), std::string::npos) << r.err;
    for (const auto& line : lines) {
      EXPECT_NE(line.find(" simulate "), std::string::npos) << line;
      EXPECT_NE(line.find("sim.mode=reduced"), std::string::npos) << line;
      EXPECT_NE(line.find(" > "), std::string::npos) << line;
      EXPECT_NE(line.find(dir + "/points/"), std::string::npos) << line;  // absolute: a task runs from anywhere
    }
    // Nothing replayed, no outputs: only the manifest and the (empty) points folder.
    EXPECT_TRUE(fs::exists(dir + "/search.json"));
    EXPECT_FALSE(fs::exists(dir + "/search.csv"));
    EXPECT_TRUE(fs::is_empty(dir + "/points"));
    fs::remove(jobs);
  }
}

TEST(SearchJobs, TheLinesRunElsewhereAndTheSearchReadsThemBack) {
  const std::string dir = temp_dir("run"), fresh = temp_dir("run_fresh");
  const std::string jobs = dir + "_jobs.txt", again = dir + "_jobs_again.txt";
  const std::string args = kTiny + " --max-replays 3 -j 1";
  const auto emitted = run_stepsim("search " + args + " --emit-jobs '" + jobs + "' -q -o '" + dir + "'");
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  // The same bytes again (into the same directory, which the same search may reuse).
  const auto twice = run_stepsim("search " + args + " --emit-jobs '" + again + "' -q -o '" + dir + "'");
  ASSERT_EQ(twice.code, 0) << twice.err;
  EXPECT_EQ(slurp(jobs), slurp(again));
  // Each line as a Slurm task runs it: from another folder, through a shell.
  const auto lines = lines_of(slurp(jobs));
  ASSERT_FALSE(lines.empty());
  for (const auto& line : lines) {
    const auto r = run_shell("cd / && " + line);
    EXPECT_EQ(r.code, 0) << line;
  }
  int reports = 0;
  for (const auto& e : fs::directory_iterator(dir + "/points"))
    reports += e.path().extension() == ".json" && fs::file_size(e.path()) > 0 ? 1 : 0;
  EXPECT_EQ(reports, int(lines.size()));
  // The search again, without --emit-jobs: every replay read back, none run.
  const auto resumed = run_stepsim("search " + args + " -o '" + dir + "'");
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("(0 run now"), std::string::npos) << resumed.err;
  // And its outputs are those of the same search run here from scratch.
  const auto local = run_stepsim("search " + args + " -q -o '" + fresh + "'");
  ASSERT_EQ(local.code, 0) << local.err;
  EXPECT_EQ(resumed.out, local.out);
  for (const std::string f : {"search.csv", "pruned.csv", "summary.txt", "best.yaml", "pareto.png"}) {
    EXPECT_FALSE(slurp(dir + "/" + f).empty()) << f;
    EXPECT_EQ(slurp(dir + "/" + f), slurp(fresh + "/" + f)) << f;
  }
  fs::remove(jobs);
  fs::remove(again);
}

TEST(SearchJobs, ToStdout) {
  const std::string dir = temp_dir("stdout");
  const auto r = run_stepsim("search " + kTiny + " --max-replays 2 --emit-jobs - -q -o '" + dir + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(int(lines_of(r.out).size()), 2 + config_plan_lines());
}

TEST(SearchJobs, HostileJobListsGetOneErrorLine) {
  const std::string dir = temp_dir("hostile");
  const std::string o = " -o '" + dir + "'";
  using stepsim::test::expect_rejected;
  expect_rejected("search " + kTiny + " --emit-jobs ''" + o, {"--emit-jobs", "empty"});
  // Inside the directory, where the search writes.
  expect_rejected("search " + kTiny + " --emit-jobs '" + dir + "/search.json'" + o, {"--emit-jobs", "manifest", "jobs.txt"});
  expect_rejected("search " + kTiny + " --emit-jobs '" + dir + "/search.csv'" + o, {"search.csv", "-o", "--emit-jobs", "own file"});
  expect_rejected("search " + kTiny + " --emit-jobs '" + dir + "/./summary.txt'" + o, {"--emit-jobs", "own file"});
  // An input of the search, a folder, and - as the directory.
  expect_rejected("search " + kTiny + " --emit-jobs '" + kConfig + "'" + o, {"--emit-jobs", "input"});
  expect_rejected("search " + kTiny + " --emit-jobs /tmp" + o, {"--emit-jobs", "directory"});
  expect_rejected("search " + kTiny + " --emit-jobs jobs.txt -o -", {"-o -", "directory"});
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
