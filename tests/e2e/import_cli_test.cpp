// `stepsim import` end to end, as the issue checks it: the two shipped example jobs (a Megatron-LM
// Llama-3-70B launch and a torchtitan Llama 3 70B TOML) import to plans that `stepsim simulate` runs
// with the source's TP, PP, virtual stages, microbatches and recompute.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli_runner.hpp"

namespace stepsim::test {
namespace {

const std::string kExamples = std::string(STEPSIM_SOURCE_DIR) + "/workloads/examples/";

nlohmann::json simulate_json(const std::string& plan) {
  const CliResult r = run_stepsim("simulate --quiet --json " + plan);
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

TEST(ImportCli, MegatronLlama3_70BLaunchSimulatesWithItsLayout) {
  ScratchDir d;
  const std::string plan = d.file("plan.yaml");
  const CliResult r = run_stepsim("import megatron " + kExamples + "megatron-llama3-70b.sh -o " + plan);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "stdout holds " << r.out;
  // Two note lines on stderr: the software profile picked, then what was not imported.
  EXPECT_EQ(r.err.rfind("note: software.profile megatron-core-r0.8 ", 0), 0u) << r.err;
  const size_t second = r.err.find('\n') + 1;
  EXPECT_EQ(r.err.find("note: not imported, no effect in stepsim's cost model: ", second), second) << r.err;
  EXPECT_EQ(r.err.find('\n', second), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("--lr"), std::string::npos);
  const nlohmann::json j = simulate_json(plan);
  ASSERT_TRUE(j.contains("roofline"));
  const auto& p = j["roofline"]["plan"];
  EXPECT_EQ(p["tp"], 8);
  EXPECT_EQ(p["pp"], 4);
  EXPECT_EQ(p["stages"], 4 * 4);  // 4 virtual stages per pipeline rank
  EXPECT_EQ(p["schedule"], "interleaved");
  EXPECT_EQ(p["microbatches"], 64 / 2);
  EXPECT_EQ(p["recompute"], "selective");
  EXPECT_EQ(p["gpus"], 64);
  EXPECT_EQ(j["tokens_per_step"], 64 * 8192);
  EXPECT_GT(j["step_time_s"].get<double>(), 0.0);
}

TEST(ImportCli, TorchtitanLlama3_70BTomlSimulatesWithItsLayout) {
  ScratchDir d;
  const std::string plan = d.file("plan.yaml");
  const CliResult r = run_stepsim("import torchtitan " + kExamples + "torchtitan-llama3-70b.toml --gpus 64 -o " + plan);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = simulate_json(plan);
  ASSERT_TRUE(j.contains("roofline"));
  const auto& p = j["roofline"]["plan"];
  EXPECT_EQ(p["tp"], 8);
  EXPECT_EQ(p["pp"], 4);
  EXPECT_EQ(p["stages"], 4 * 2);
  EXPECT_EQ(p["schedule"], "interleaved");
  EXPECT_EQ(p["microbatches"], 16);
  EXPECT_EQ(p["recompute"], "full");
  EXPECT_EQ(j["tokens_per_step"], 32 * 8192);
}

TEST(ImportCli, WithoutOutputThePlanGoesToStdout) {
  const CliResult r = run_stepsim("import megatron -q " + kExamples + "megatron-llama3-70b.sh");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_EQ(r.out.rfind("# Imported by `stepsim import megatron`", 0), 0u) << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("\nschedule: interleaved"), std::string::npos);
}

}  // namespace
}  // namespace stepsim::test
