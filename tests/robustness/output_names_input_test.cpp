// An output that names one of the command's inputs (the config, model.config_json, a routing load
// file, a hardware profile, a profiler trace, the imported script) or another of its outputs is
// refused in one line, exit 2, before anything is written: compared as files (a symbolic link, a
// hard link or ./x is the same file). `-` is stdout where the output is text and stdout is free,
// and a clear refusal otherwise; it never makes a file named `-`.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/text_files.hpp"

namespace stepsim::test {
namespace {

using stepsim::test::slurp;

namespace fs = std::filesystem;

const std::string kSource = STEPSIM_SOURCE_DIR;
// Llama 3.1 8B cut to 4 layers and 64 sequences: a replay of a fraction of a second.
const std::string kSmall = " --set model.num_hidden_layers=4 --set train.global_batch=64 --set parallel.microbatches=4";

// A scratch folder holding copies of the inputs the cases name.
struct Inputs {
  ScratchDir dir;
  Inputs() {
    fs::copy_file(kSource + "/workloads/examples/megatron-llama3-70b.sh", dir.file("run.sh"));
    fs::copy_file(kSource + "/workloads/models/llama-3.1-8b.config.json", dir.file("m.json"));
    fs::copy_file(kSource + "/workloads/hardware/h800.yaml", dir.file("prof.yaml"));
    fs::copy_file(kSource + "/tests/data/deepseek-train.json", dir.file("tr.json"));
    std::string cfg = slurp(kSource + "/workloads/llama-3.1-8b.yaml");
    const std::string key = "models/llama-3.1-8b.config.json";
    cfg.replace(cfg.find(key), key.size(), "m.json");
    dir.write("cfg.yaml", cfg);
    std::string loads = "layer,expert,tokens\n";
    for (int l = 3; l < 5; ++l)
      for (int e = 0; e < 8; ++e) loads += std::to_string(l) + "," + std::to_string(e) + ",10\n";
    dir.write("loads.csv", loads);
    fs::create_directory(dir.path() / "d");
  }
  std::string all() const {
    std::string s;
    for (const char* f : {"run.sh", "m.json", "prof.yaml", "tr.json", "cfg.yaml", "loads.csv"}) s += slurp(dir.file(f));
    return s;
  }
};

// `args`, run inside the folder, is refused in one line naming each piece, and no input changed
// and no file appeared.
void expect_refused(const Inputs& in, const std::string& args, std::initializer_list<std::string> pieces) {
  const std::string before = in.all();
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(in.dir.path())) ++files;
  const CliResult r = run_stepsim(args, in.dir.path().string());
  EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << args << ": not one line: " << r.err;
  EXPECT_EQ(r.err.rfind("stepsim: error: ", 0), 0u) << r.err;
  for (const auto& p : pieces) EXPECT_NE(r.err.find(p), std::string::npos) << args << ": no \"" << p << "\" in " << r.err;
  EXPECT_TRUE(in.all() == before) << args << ": an input changed";
  size_t after = 0;
  for ([[maybe_unused]] const auto& e : fs::recursive_directory_iterator(in.dir.path())) ++after;
  EXPECT_EQ(after, files) << args << ": a file appeared or went";
}

TEST(OutputNamesInput, EveryCommandRefusesToWriteOverAnInput) {
  const Inputs in;
  ::symlink("run.sh", in.dir.file("link.sh").c_str());
  ::link(in.dir.file("run.sh").c_str(), in.dir.file("hard.sh").c_str());
  const std::string clash = "is also an input of this command";
  for (const std::string out : {"run.sh", "./run.sh", "link.sh", "hard.sh"})
    expect_refused(in, "import megatron run.sh -q -o " + out, {"-o", "import megatron"});
  expect_refused(in, "report cfg.yaml --no-waterfall -q -o cfg.yaml" + kSmall, {"cfg.yaml", "-o", clash, "config"});
  expect_refused(in, "simulate cfg.yaml -q --trace cfg.yaml" + kSmall, {"--trace", clash, "config"});
  expect_refused(in, "simulate cfg.yaml -q --trace m.json" + kSmall, {"--trace", clash, "model.config_json"});
  expect_refused(in, "platform cfg.yaml -o cfg.yaml", {"-o", clash, "config"});
  expect_refused(in, "platform cfg.yaml --set hardware.profile=prof.yaml -o prof.yaml", {"-o", clash, "hardware.profile"});
  expect_refused(in, "platform cfg.yaml --png m.json", {"--png", clash, "model.config_json"});
  expect_refused(in, "explain cfg.yaml -q --no-routing-sim --png cfg.yaml" + kSmall, {"--png", clash});
  expect_refused(in, "sweep cfg.yaml -q --grid parallel.microbatches=2,4 -o d --png cfg.yaml" + kSmall, {"--png", clash});
  expect_refused(in, "sweep cfg.yaml -q --grid parallel.microbatches=2,4 -o d --emit-jobs m.json" + kSmall,
                 {"--emit-jobs", clash, "model.config_json"});
  // The input read after the output was checked: the trace of calibrate, the routing load file.
  expect_refused(in, "calibrate tr.json -q -o tr.json", {"tr.json", "profiler trace", "is also the output of -o"});
  const std::string moe =
      " --set model.num_hidden_layers=5 --set model.n_routed_experts=8 --set model.n_group=8 --set model.topk_group=4"
      " --set model.num_experts_per_tok=2 --set cluster.nodes=1 --set parallel.pp=1 --set parallel.ep=8"
      " --set schedule=1f1b --set train.global_batch=8 --set parallel.microbatches=1 --set scenario.routing=file"
      " --set scenario.load_file=loads.csv";
  expect_refused(in, "simulate -q --trace loads.csv" + moe, {"loads.csv", "scenario.load_file"});
  expect_refused(in, "report -q --no-waterfall -o ./loads.csv" + moe, {"loads.csv", "scenario.load_file"});
}

TEST(OutputNamesInput, TwoOutputsOfOneCommandNamingOneFileAreRefused) {
  const Inputs in;
  expect_refused(in, "platform cfg.yaml -o p.xml --png p.xml", {"p.xml", "named by both", "-o", "--png"});
  expect_refused(in, "sweep cfg.yaml -q --grid parallel.microbatches=2,4 -o d --png d/sweep.csv" + kSmall,
                 {"sweep.csv", "named by both", "-o", "--png"});
  expect_refused(in, "sweep cfg.yaml -q --grid parallel.microbatches=2,4 -o d --emit-jobs d/sweep.json" + kSmall,
                 {"sweep.json", "named by both", "--emit-jobs"});
  // Devices are shared freely.
  const CliResult r = run_stepsim("platform cfg.yaml -o /dev/null --png /dev/null", in.dir.path().string());
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST(OutputNamesInput, DashIsStdoutForTextWhereStdoutIsFreeAndRefusedElsewhere) {
  const Inputs in;
  const std::string cwd = in.dir.path().string();
  const CliResult yaml = run_stepsim("import megatron run.sh -q -o -", cwd);
  EXPECT_EQ(yaml.code, 0) << yaml.err;
  EXPECT_EQ(yaml.out, run_stepsim("import megatron run.sh -q", cwd).out);  // as without -o
  EXPECT_NE(yaml.out.find("parallel:"), std::string::npos);
  const CliResult xml = run_stepsim("platform cfg.yaml -o -", cwd);
  EXPECT_EQ(xml.code, 0) << xml.err;
  EXPECT_EQ(xml.out.rfind("<?xml", 0), 0u);
  const CliResult html = run_stepsim("report cfg.yaml --no-waterfall -q -o -" + kSmall, cwd);
  EXPECT_EQ(html.code, 0) << html.err;
  EXPECT_EQ(html.out.rfind("<!DOCTYPE html>", 0), 0u);
  const CliResult jobs = run_stepsim("sweep cfg.yaml -q --grid parallel.microbatches=2,4 -o d --emit-jobs -" + kSmall, cwd);
  EXPECT_EQ(jobs.code, 0) << jobs.err;
  EXPECT_EQ(std::count(jobs.out.begin(), jobs.out.end(), '\n'), 2) << jobs.out;
  EXPECT_FALSE(fs::exists(in.dir.path() / "-"));
  // Binary, a directory, or stdout already carrying the report: refused, saying why.
  expect_refused(in, "platform cfg.yaml --png -", {"--png -", "binary", "./-"});
  expect_refused(in, "explain cfg.yaml -q --no-routing-sim --png -" + kSmall, {"--png -", "binary"});
  expect_refused(in, "simulate cfg.yaml -q --trace -" + kSmall, {"--trace -", "stdout carries the command's report"});
  expect_refused(in, "calibrate tr.json -q -o -", {"-o -", "stdout carries the command's report"});
  expect_refused(in, "sweep cfg.yaml -q --grid parallel.microbatches=2,4 -o -" + kSmall, {"-o -", "directory"});
  expect_refused(in, "sweep --collect -", {"--collect -", "directory"});
}

}  // namespace
}  // namespace stepsim::test
