// `stepsim sweep --emit-jobs`'s lines run from any folder: a sweep emitted with a relative config,
// a relative -o and a --set naming a file by a relative path, from inside a scratch folder, has
// each line run by /bin/sh from `/` (as a cluster task that starts elsewhere would), and every
// point's report is there and --collect merges them; the same from a folder whose name holds a
// space, quotes, $ and a backtick, which must reach the shell as one quoted word.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace {

using stepsim::test::slurp;
using stepsim::test::lines_of;
using stepsim::test::csv_cells;

namespace fs = std::filesystem;

struct Ran {
  int code = -1;
  std::string err;
};

// Runs argv in `cwd` with no shell in between (so the test's own quoting cannot hide the
// program's), its stderr kept in `err_file`.
Ran run_in(const std::string& cwd, const std::vector<std::string>& args, const std::string& err_file) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = ::open("/dev/null", O_WRONLY);
    if (err < 0 || null < 0 || ::dup2(err, 2) < 0 || ::dup2(null, 1) < 0 || ::chdir(cwd.c_str()) != 0) ::_exit(126);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  Ran r;
  int status = 0;
  if (pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.err = slurp(err_file);
  return r;
}

Ran stepsim_in(const std::string& cwd, std::vector<std::string> args, const std::string& err_file) {
  args.insert(args.begin(), STEPSIM_BINARY);
  return run_in(cwd, args, err_file);
}

// A job line as a cluster task runs it: /bin/sh -c LINE, started in `cwd`.
Ran sh_in(const std::string& cwd, const std::string& line, const std::string& err_file) {
  return run_in(cwd, {"/bin/sh", "-c", line}, err_file);
}

// The sweep's flags: a synthetic 1F1B pipeline of 4 ranks with communication off, B = 2 s, a
// --set naming the model file by a path relative to the folder the sweep runs in, and two grid
// axes of 2 values: 2 x 2 = 4 points.
std::vector<std::string> sweep_flags() {
  return {"--set", "workload.kind=synthetic", "--set", "schedule=1f1b", "--set", "parallel.pp=4",
          "--set", "workload.b_s=2", "--set", "workload.w_s=1", "--set", "workload.send_bytes=0",
          "--set", "model.config_json=models/m.json",
          "--grid", "parallel.microbatches=2,6", "--grid", "workload.f_s=1,0.5"};
}
constexpr int kPoints = 2 * 2;
// Point i's values (the last axis varies fastest) and its step with communication off, by the 1F1B
// makespan (m + PP - 1)(F + B): (2+3)(1+2) = 15, (2+3)(0.5+2) = 12.5, (6+3)(1+2) = 27,
// (6+3)(0.5+2) = 22.5 s.
const char* const kMicrobatches[kPoints] = {"2", "2", "6", "6"};
const char* const kForward[kPoints] = {"1", "0.5", "1", "0.5"};
const double kStep_s[kPoints] = {15.0, 12.5, 27.0, 22.5};

// A folder with the sweep's inputs under relative names: plan.yaml (the shipped DeepSeek-V3
// config, which names no file of its own) and models/m.json (a Hugging Face config).
void write_inputs(const fs::path& folder) {
  fs::create_directories(folder / "models");
  fs::copy_file(fs::path(STEPSIM_SOURCE_DIR) / "workloads/deepseek-v3.yaml", folder / "plan.yaml");
  fs::copy_file(fs::path(STEPSIM_SOURCE_DIR) / "workloads/models/pythia-1.4b.config.json", folder / "models/m.json");
}

// Emits the sweep from `folder` with relative paths, runs every line from `/`, checks each point's
// report and --collect's table.
void emit_run_collect(const stepsim::test::ScratchDir& scratch, const fs::path& folder, const std::string& out) {
  write_inputs(folder);
  const std::string err = scratch.file("stderr.txt");
  std::vector<std::string> args = {"sweep", "plan.yaml"};
  for (const auto& f : sweep_flags()) args.push_back(f);
  for (const std::string f : {"-o", out.c_str(), "--emit-jobs", "jobs.txt", "-q"}) args.push_back(f);
  const Ran emitted = stepsim_in(folder, args, err);
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  const auto lines = lines_of(slurp((folder / "jobs.txt").string()));
  ASSERT_EQ(int(lines.size()), kPoints);
  EXPECT_FALSE(fs::exists(folder / out / "points/000.json")) << "nothing runs before the lines do";

  for (const auto& line : lines) {
    const Ran r = sh_in("/", line, err);
    EXPECT_EQ(r.code, 0) << line << "\n" << r.err;
  }
  for (int i = 0; i < kPoints; ++i) {
    const fs::path report = folder / out / "points" / ("00" + std::to_string(i) + ".json");
    ASSERT_TRUE(fs::exists(report)) << report;
    const std::string text = slurp(report.string());
    ASSERT_TRUE(nlohmann::json::accept(text)) << report << ": " << slurp(fs::path(report).replace_extension(".err"));
    const auto j = nlohmann::json::parse(text);
    EXPECT_NEAR(j["step_time_s"].get<double>(), kStep_s[i], 1e-9 * kStep_s[i]) << i;
    const auto sets = j["sets"].get<std::vector<std::string>>();
    EXPECT_NE(std::find(sets.begin(), sets.end(), std::string("parallel.microbatches=") + kMicrobatches[i]), sets.end());
    EXPECT_NE(std::find(sets.begin(), sets.end(), std::string("workload.f_s=") + kForward[i]), sets.end());
  }

  // --collect merges them, run from the same folder with the same relative -o.
  const Ran c = stepsim_in(folder, {"sweep", "--collect", out, "-q"}, err);
  ASSERT_EQ(c.code, 0) << c.err;
  const auto rows = lines_of(slurp((folder / out / "sweep.csv").string()));
  ASSERT_EQ(int(rows.size()), 1 + kPoints);  // the header, one row per point
  const auto header = csv_cells(rows[0]);
  const size_t step = size_t(std::find(header.begin(), header.end(), "step_time_s") - header.begin());
  ASSERT_LT(step, header.size()) << rows[0];
  ASSERT_EQ(header[2], "error");
  for (int i = 0; i < kPoints; ++i) {
    const auto cells = csv_cells(rows[size_t(i) + 1]);
    ASSERT_GT(cells.size(), step) << rows[size_t(i) + 1];
    EXPECT_EQ(cells[0], kMicrobatches[i]);
    EXPECT_EQ(cells[1], kForward[i]);
    EXPECT_EQ(cells[2], "") << "point " << i << " failed";
    EXPECT_NEAR(std::stod(cells[step]), kStep_s[i], 1e-9 * kStep_s[i]) << i;
  }
  EXPECT_TRUE(fs::exists(folder / out / "sweep.png"));
}

TEST(SweepJobs, RelativePathsMeanTheEmittingFolderWhereverALineRuns) {
  const stepsim::test::ScratchDir scratch;
  emit_run_collect(scratch, scratch.path() / "work", "out");
}

TEST(SweepJobs, AnOddFolderNameIsOneQuotedWord) {
  const stepsim::test::ScratchDir scratch;
  // Expanded or split by the shell, any of these would send the line's cd (or its output) elsewhere.
  emit_run_collect(scratch, scratch.path() / "it's a \"dir\" $HOME `false`; #", "o 'x' $y");
}

}  // namespace
