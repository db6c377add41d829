// `stepsim export` end to end: the shipped example jobs imported, exported and imported again give
// plans whose roofline reports are the same object; what does not load or cannot be written is
// refused in one line with exit code 2, before anything is written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"

namespace stepsim::test {
namespace {

const std::string kExamples = std::string(STEPSIM_SOURCE_DIR) + "/workloads/examples/";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json roofline(const std::string& plan) {
  const CliResult r = run_stepsim("roofline --quiet --json " + plan);
  EXPECT_EQ(r.code, 0) << r.err;
  nlohmann::json j = r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
  j.erase("config");  // the file's name
  if (j.contains("plan")) j["plan"].erase("model");  // the importer names the model after the file it read
  return j;
}

struct Case {
  const char* tool;
  const char* example;
  const char* import_options;  // the world size torchtitan's TOML does not hold
};

TEST(ExportCli, TheShippedExamplesRoundTripThroughTheCommandLine) {
  for (const Case c : {Case{"megatron", "megatron-llama3-70b.sh", ""},
                       Case{"torchtitan", "torchtitan-llama3-70b.toml", " --gpus 64"}}) {
    SCOPED_TRACE(c.tool);
    ScratchDir d;
    const std::string first = d.file("first.yaml"), job = d.file(std::string("job") + (c.tool[0] == 'm' ? ".sh" : ".toml")),
                      second = d.file("second.yaml");
    ASSERT_EQ(run_stepsim(std::string("import ") + c.tool + " " + kExamples + c.example + c.import_options + " -q -o " + first).code, 0);
    const CliResult exported = run_stepsim(std::string("export ") + c.tool + " " + first + " -o " + job);
    ASSERT_EQ(exported.code, 0) << exported.err;
    EXPECT_TRUE(exported.out.empty()) << exported.out;
    EXPECT_TRUE(exported.err.empty()) << exported.err;
    // -o - and no -o: the same bytes on stdout.
    EXPECT_EQ(run_stepsim(std::string("export ") + c.tool + " " + first + " -o -").out, read(job));
    EXPECT_EQ(run_stepsim(std::string("export ") + c.tool + " " + first).out, read(job));
    const CliResult back = run_stepsim(std::string("import ") + c.tool + " " + job + c.import_options + " -q -o " + second);
    ASSERT_EQ(back.code, 0) << back.err;
    const nlohmann::json a = roofline(first), b = roofline(second);
    EXPECT_EQ(a, b) << nlohmann::json::diff(a, b).dump();
    EXPECT_EQ(b["plan"]["tp"], 8);
    EXPECT_EQ(b["plan"]["pp"], 4);
  }
}

TEST(ExportCli, HostileInputsAreRefusedInOneLine) {
  ScratchDir d;
  const std::string bad = d.write("bad.yaml", "model: [unclosed\n");
  expect_rejected("export megatron " + d.file("missing.yaml"), {"missing.yaml"});
  expect_rejected("export megatron " + bad, {"bad.yaml"});
  expect_rejected("export torchtitan " + bad + " -o " + d.file("out.toml"), {"bad.yaml"});
  EXPECT_FALSE(std::filesystem::exists(d.file("out.toml")));
  expect_rejected("export slurm " + bad, {"export slurm", "unknown target", "stepsim export megatron"});
  expect_rejected("export megatron", {"plan"});
  // A plan that loads, written where it cannot be, or over itself: refused before anything is written.
  const std::string plan = d.file("plan.yaml");
  ASSERT_EQ(run_stepsim("import megatron " + kExamples + "megatron-llama3-70b.sh -q -o " + plan).code, 0);
  const std::string before = read(plan);
  expect_rejected("export megatron " + plan + " -o " + d.file("no/such/dir/job.sh"), {"-o", "no/such/dir"});
  expect_rejected("export megatron " + plan + " -o " + plan, {"-o", "plan.yaml"});
  EXPECT_EQ(read(plan), before);
  expect_rejected("export megatron " + plan + " --set parallel.tp=3", {"--set parallel.tp=3"});
  // What the target cannot express: the key, why and the fix (the seed's DualPipeV plan).
  expect_rejected("export megatron -o " + d.file("seed.sh") + " " + std::string(STEPSIM_SOURCE_DIR) + "/workloads/deepseek-v3.yaml",
                  {"deepseek-v3.yaml", "schedule = dualpipev", "use schedule=1f1b"});
  EXPECT_FALSE(std::filesystem::exists(d.file("seed.sh")));
}

}  // namespace
}  // namespace stepsim::test
