// `stepsim sweep` end to end through the binary: CSV rows against the 1F1B closed form, the PNG,
// --emit-jobs + --collect giving the same CSV, bad grid keys, failing points, reproducibility.
#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"
#include "tests/text_files.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using stepsim::test::slurp;
using stepsim::test::csv_cells;

namespace fs = std::filesystem;

using Result = stepsim::test::CliResult;

// A fresh directory per test (ctest runs tests in parallel processes).
std::string temp_dir(const std::string& name) {
  const std::string d = stepsim::test::process_scratch().file("sweep_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Result run(const std::string& args, const std::string& /*dir*/) { return stepsim::test::run_stepsim(args); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (const char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// A synthetic 1F1B pipeline with communication off: 4 ranks, F = 1 s, B = 2 s per microbatch
// (2048 GPUs / 4 ranks = 512 replicas x 30 sequences, so 2 and 6 microbatches divide evenly).
const std::string kSynthetic =
    "--set workload.kind=synthetic --set schedule=1f1b --set parallel.pp=4 --set workload.f_s=1 "
    "--set workload.b_s=2 --set workload.w_s=1 --set workload.send_bytes=0";

size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

TEST(SweepCli, TwoPointSweepMatchesTheClosedFormAndDrawsAPng) {
  const std::string dir = temp_dir("two");
  const Result r = run("sweep " + kSynthetic + " --grid parallel.microbatches=2,6 -j 2 -o " + dir, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;                                  // stdout stays clean
  EXPECT_NE(r.err.find("2/2 points done"), std::string::npos) << r.err;  // progress on stderr
  const auto lines = split(slurp(dir + "/sweep.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);  // header + one row per point
  const auto header = split(lines[0], ',');
  EXPECT_EQ(header[0], "parallel.microbatches");
  EXPECT_EQ(header[1], "error");
  // 1F1B makespan with communication off: (m + PP - 1)(F + B).
  const double expect[] = {(2 + 3) * 3.0, (6 + 3) * 3.0};
  for (int i = 0; i < 2; ++i) {
    const auto row = split(lines[size_t(i) + 1], ',');
    ASSERT_EQ(row.size() + (lines[size_t(i) + 1].back() == ',' ? 1 : 0), header.size());
    EXPECT_EQ(row[0], i == 0 ? "2" : "6");
    EXPECT_EQ(row[1], "");
    EXPECT_NEAR(std::stod(row[column(header, "step_time_s")]), expect[i], 1e-9 * expect[i]);
  }
  for (const char* f : {"/points/000.json", "/points/001.json", "/points/000.err", "/points/001.err", "/sweep.json"})
    EXPECT_TRUE(fs::exists(dir + f)) << f;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(slurp(dir + "/points/001.json"))["step_time_s"].get<double>(), expect[1]);
  const std::string png = slurp(dir + "/sweep.png");
  ASSERT_GE(png.size(), 8u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

TEST(SweepCli, EmitJobsThenCollectGivesTheDirectRunsCsv) {
  const std::string dir = temp_dir("emit");
  const std::string grid = " --grid parallel.microbatches=2,6 --grid workload.f_s=1,0.5 ";
  ASSERT_EQ(run("sweep " + kSynthetic + grid + "-o " + dir + "/direct", dir).code, 0);
  const Result e = run("sweep " + kSynthetic + grid + "-o " + dir + "/cluster --emit-jobs " + dir + "/jobs.txt", dir);
  ASSERT_EQ(e.code, 0) << e.err;
  const auto jobs = split(slurp(dir + "/jobs.txt"), '\n');
  ASSERT_EQ(jobs.size(), 4u);  // 2 x 2 points, one shell line each
  EXPECT_FALSE(fs::exists(dir + "/cluster/sweep.csv"));
  // Before the jobs run, collect reports every point missing and fails.
  EXPECT_NE(run("sweep --collect " + dir + "/cluster", dir).code, 0);
  for (const auto& line : jobs) ASSERT_EQ(std::system(line.c_str()), 0) << line;  // as GNU parallel would
  const Result c = run("sweep --collect " + dir + "/cluster", dir);
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_EQ(slurp(dir + "/cluster/sweep.csv"), slurp(dir + "/direct/sweep.csv"));
  EXPECT_EQ(split(slurp(dir + "/cluster/sweep.csv"), '\n').size(), 5u);
  EXPECT_EQ(slurp(dir + "/cluster/sweep.png").substr(0, 4), "\x89PNG");
}

TEST(SweepCli, UnknownGridKeyIsOneErrorLineAndExitTwo) {
  const std::string dir = temp_dir("badkey");
  const Result r = run("sweep --grid parallel.microbatchez=1,2 -o " + dir + "/out", dir);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("parallel.microbatchez"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/out/points")) << "nothing may start before the grid is checked";
  EXPECT_EQ(run("sweep --grid parallel.microbatches=2 --plot-x parallel.pp -o " + dir + "/out", dir).code, 2);
  EXPECT_EQ(run("sweep --collect " + dir + "/nowhere", dir).code, 2);
}

TEST(SweepCli, AFailingPointIsRecordedWhileTheOthersRun) {
  const std::string dir = temp_dir("fail");
  // DualPipeV needs at least 2 x PP = 8 microbatches: 6 is an impossible plan, 10 is fine.
  const Result r = run("sweep " + kSynthetic + " --set schedule=dualpipev --grid parallel.microbatches=6,10 -q -o " + dir, dir);
  EXPECT_EQ(r.code, 1) << r.err;
  const auto lines = split(slurp(dir + "/sweep.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("DualPipeV needs at least"), std::string::npos) << lines[1];
  const auto header = split(lines[0], ',');
  const auto ok_row = split(lines[2], ',');
  EXPECT_EQ(ok_row[1], "");
  EXPECT_GT(std::stod(ok_row[column(header, "step_time_s")]), 0.0);
  // Every point impossible: bad input, exit 2 before anything runs.
  EXPECT_EQ(run("sweep " + kSynthetic + " --set schedule=dualpipev --grid parallel.microbatches=2,6 -o " + dir + "/none", dir).code, 2);
}

TEST(SweepCli, ANonNumericGridKeyIsDrawnAsCategories) {
  const std::string dir = temp_dir("names");
  const Result r = run("sweep " + kSynthetic + " --set parallel.microbatches=10 --grid schedule=1f1b,dualpipev -q -o " + dir, dir);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(split(slurp(dir + "/sweep.csv"), '\n').size(), 3u);
  EXPECT_TRUE(fs::exists(dir + "/sweep.png"));
}

// A sweep over hardware.preset on a config with rates of its own (Llama 3.1 405B's H100 rates):
// each point switches GPU (its rows differ; they were identical, the file's rates winning), and the
// notes simulate prints on stderr -- which a point, run with --quiet, dropped -- are in the CSV.
TEST(SweepCli, PresetSweepSwitchesGpuAndKeepsTheNotes) {
  const std::string dir = temp_dir("presets");
  // The shipped file now names the h100-sxm preset (the per-op cost model reads its keys): a copy
  // states the H100 rates it used to hold.
  const std::string config_dir = temp_dir("presets_config");
  std::string text = slurp(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-405b.yaml");
  const auto swap = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  swap("  preset: h100-sxm ", "  name: H100\n  fp8_tflops: 1456.6\n  bf16_tflops: 757.7\n  ib_GBps: 50\n  nvlink_GBps: 360\n"
                             "  sms: 132\n  memory_GiB: 80\n #");
  swap("config_json: models/", "config_json: " + std::string(STEPSIM_SOURCE_DIR) + "/workloads/models/");
  std::ofstream(config_dir + "/llama-own-rates.yaml") << text;
  const Result r = run("sweep " + config_dir + "/llama-own-rates.yaml --set model.num_hidden_layers=16 "
                           "--set parallel.microbatches=16 --grid hardware.preset=h100-sxm,b200 -q -o " + dir,
                       dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = split(slurp(dir + "/sweep.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);
  const auto header = csv_cells(lines[0]);
  const size_t step = column(header, "step_time_s"), fp8 = column(header, "roofline.assumed.fp8_tflops");
  const auto h100 = csv_cells(lines[1]), b200 = csv_cells(lines[2]);
  ASSERT_EQ(h100.size(), header.size());
  EXPECT_EQ(h100[fp8], "1456.6");
  EXPECT_EQ(b200[fp8], "3312.1");
  EXPECT_LT(std::stod(b200[step]), std::stod(h100[step]));
  EXPECT_NE(b200[column(header, "notes")].find("hardware.fp8_tflops = 3312.1 from hardware.preset b200 (--set) replaces"),
            std::string::npos)
      << lines[2];
  EXPECT_EQ(b200[column(header, "sets")],
            "model.num_hidden_layers=16; parallel.microbatches=16; hardware.preset=b200");
}

TEST(SweepCli, SameSweepTwiceGivesByteIdenticalCsv) {
  const std::string dir = temp_dir("repeat");
  const std::string args = "sweep " + kSynthetic + " --set workload.send_bytes=1e8 --grid parallel.microbatches=2,6 -q -o ";
  ASSERT_EQ(run(args + dir + "/a", dir).code, 0);
  ASSERT_EQ(run(args + dir + "/b -j 1", dir).code, 0);
  const std::string a = slurp(dir + "/a/sweep.csv");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, slurp(dir + "/b/sweep.csv"));
  EXPECT_EQ(a.find("wall_s"), std::string::npos);  // wall time would differ run to run
}

// The shares the docs/ figures plot, from the roofline the sweep draws dashed: the seed's FSDP
// exposed share 13 / 31 / 51 / 69 % at 1 / 2 / 4 / 8 microbatches, and DualPipeV's bubble
// (PP-1)/(3m) of compute.
TEST(SweepCli, RooflineCarriesTheSharesASweepPlots) {
  const std::string dir = temp_dir("roof");
  const int m[] = {1, 2, 4, 8};
  const double seed[] = {0.13, 0.31, 0.51, 0.69};
  for (int i = 0; i < 4; ++i) {
    const Result r = run("roofline --json --set schedule=fsdp --set parallel.split_lone_chunks=false --set parallel.pp=1 --set parallel.zero=3 "
                         "--set parallel.microbatches=" + std::to_string(m[i]), dir);
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_NEAR(j["exposed_comm_share"].get<double>(), seed[i], 0.005) << m[i];  // the seed rounds to 1 %
  }
  for (const int mb : {20, 60}) {
    const Result r = run("roofline --json --set parallel.microbatches=" + std::to_string(mb), dir);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NEAR(nlohmann::json::parse(r.out)["bubble_share_of_compute"].get<double>(), 7.0 / (3.0 * mb), 1e-12);
  }
}

}  // namespace

// --plot-y names report fields, known before any point runs: a misspelt one, a text one or a mix of
// three units is one error line with exit 2, and nothing is written (no sweep directory, no point
// ran). It used to fail only once every point had run.
TEST(SweepCli, PlotFieldsAreCheckedBeforeAnyPointRuns) {
  const std::string dir = temp_dir("ploty");
  const std::string out = dir + "/sweep";
  const std::string base = "sweep " + kSynthetic + " --grid parallel.microbatches=2,6 -o " + out;
  const Result typo = run(base + " --plot-y step_tme_s", dir);
  EXPECT_EQ(typo.code, 2) << typo.err;
  EXPECT_NE(typo.err.find("--plot-y step_tme_s"), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("did you mean step_time_s"), std::string::npos) << typo.err;
  const Result text = run(base + " --plot-y sim.mode", dir);
  EXPECT_EQ(text.code, 2) << text.err;
  EXPECT_NE(text.err.find("text field"), std::string::npos) << text.err;
  const Result units = run(base + " --plot-y step_time_s --plot-y exposed_comm_share --plot-y memory.peak_bytes", dir);
  EXPECT_EQ(units.code, 2) << units.err;
  EXPECT_NE(units.err.find("3 different units"), std::string::npos) << units.err;
  for (const Result* r : {&typo, &text, &units}) {
    EXPECT_EQ(std::count(r->err.begin(), r->err.end(), '\n'), 1) << r->err;  // one line
    EXPECT_EQ(r->err.find("points done"), std::string::npos) << r->err;    // nothing ran
  }
  EXPECT_FALSE(fs::exists(out));
  // A second unit is fine; a roofline field the synthetic workload does not have is left out with a note.
  const Result ok = run(base + " --plot-y step_time_s --plot-y roofline.bubble_s --plot-y exposed_comm_share", dir);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.err.find("--plot-y roofline.bubble_s: no point's report has this field; not drawn"), std::string::npos)
      << ok.err;
  // --collect checks them the same way, before redrawing.
  const Result collect = run("sweep --collect " + out + " --plot-y step_tme_s", dir);
  EXPECT_EQ(collect.code, 2) << collect.err;
  EXPECT_NE(collect.err.find("did you mean step_time_s"), std::string::npos) << collect.err;
}

// A grid where one plan does not fit in memory (1 GiB of HBM): the CSV that feeds the chart says
// so (memory.fits false), the summary counts it, and the fastest plan named is one that fits, though
// both points take the same time and the one that does not fit comes first.
TEST(SweepCli, OutOfMemoryPointsAreMarkedAndNeverTheFastest) {
  const std::string dir = temp_dir("oom");
  const std::string small =
      " --set model.num_hidden_layers=8 --set cluster.nodes=4 --set parallel.pp=2 --set parallel.ep=16"
      " --set train.global_batch=64 --set parallel.microbatches=4";
  const Result r = run("sweep" + small + " --grid hardware.memory_GiB=1,80 -j 2 -o " + dir, dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = split(slurp(dir + "/sweep.csv"), '\n');
  ASSERT_EQ(lines.size(), 3u);
  // RFC 4180 cells: text fields (explanation, mode_description) are quoted and hold commas.
  const auto cells = [](const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) out.emplace_back();
      else out.back() += c;
    }
    return out;
  };
  const auto header = cells(lines[0]);
  const size_t fits = column(header, "memory.fits"), step = column(header, "step_time_s");
  const auto one = cells(lines[1]), eighty = cells(lines[2]);
  ASSERT_EQ(one.size(), header.size());
  EXPECT_EQ(one[0], "1");
  EXPECT_EQ(one[fits], "false");
  EXPECT_EQ(eighty[fits], "true");
  EXPECT_EQ(one[step], eighty[step]);  // the same replay: memory capacity changes no time
  EXPECT_NE(r.err.find("1 point does not fit in GPU memory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fastest plan that fits in memory: hardware.memory_GiB=80"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/sweep.png"));
}
