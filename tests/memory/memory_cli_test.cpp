// The memory keys and reports through the stepsim binary and the config loader: bad values get one
// clear error (exit 2), --strict exits 3 for a plan that does not fit, the JSON carries the
// documented keys, and the roofline prints the static estimate.
#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "vocabulary/config_error.hpp"
#include "simulator/config/config_loader.hpp"

namespace stepsim {
namespace {

using Result = stepsim::test::CliResult;

Result run(const std::string& args) { return stepsim::test::run_stepsim(args); }

std::string error_of(const std::vector<std::string>& sets) {
  try {
    load_plan(default_config_path(), sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryConfig, BadValuesNameTheKeyAndTheFix) {
  EXPECT_NE(error_of({"parallel.recompute=partial"})
                .find("parallel.recompute: unknown value \"partial\"; use none, deepseek, selective, full, torchtitan-op, or a list of "
                      "Megatron-LM's recompute modules (any of core_attn moe_act layernorm mla_up_proj mlp moe shared_experts)"),
            std::string::npos);
  EXPECT_NE(error_of({"parallel.recompute=[layernorm, mlps]"}).find("parallel.recompute: unknown module \"mlps\""),
            std::string::npos);
  EXPECT_NE(error_of({"parallel.recompute=[full]"}).find("parallel.recompute: unknown module \"full\""), std::string::npos);
  EXPECT_NE(error_of({"parallel.recompute=3"}).find("parallel.recompute: expected a name or a list of module names"),
            std::string::npos);
  EXPECT_NE(error_of({"hardware.memory_GiB=-80"}).find("hardware.memory_GiB: must be greater than zero"), std::string::npos);
  EXPECT_NE(error_of({"hardware.memory_GiB=0"}).find("hardware.memory_GiB: must be greater than zero"), std::string::npos);
  EXPECT_NE(error_of({"hardware.memory_GiB=lots"}).find("hardware.memory_GiB: expected a number"), std::string::npos);
  EXPECT_NE(error_of({"parallel.fp8_stash=maybe"}).find("parallel.fp8_stash: expected true or false"), std::string::npos);
  EXPECT_NE(error_of({"hardware.memory_GiB=80e9"}).find("hardware.memory_GiB: 8e+10 GiB per GPU"), std::string::npos);
  EXPECT_NE(error_of({"parallel.recompute_policy=full"}).find("parallel.recompute_policy: unknown key"), std::string::npos);
  // The shipped default: 80 GiB (H800), DeepSeek's recompute, FP8 stashes.
  const Plan p = load_plan(default_config_path());
  EXPECT_EQ(p.hardware.memory_GiB, 80);
  EXPECT_EQ(p.parallel.recompute, Recompute::DeepSeek);
  EXPECT_TRUE(p.parallel.fp8_stash);
}

TEST(MemoryConfig, BadValueInAFileNamesTheFile) {
  const std::string path = stepsim::test::process_scratch().file("mem_bad.yaml");
  std::ifstream in(default_config_path());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto at = text.find("preset: h800");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 12, "preset: h800\n  memory_GiB: -1");
  std::ofstream(path) << text;
  try {
    load_plan(path);
    FAIL() << "a negative memory_GiB was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": hardware.memory_GiB: must be greater than zero"), std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

TEST(MemoryCli, BadRecomputeExitsTwoWithOneLine) {
  const Result r = run("simulate --quiet --set parallel.recompute=sometimes");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("parallel.recompute"), std::string::npos);
}

TEST(MemoryCli, StrictExitsThreeWhenThePlanDoesNotFit) {
  const Result fits = run("simulate --quiet --strict --json");
  EXPECT_EQ(fits.code, 0) << fits.err;
  const auto j = nlohmann::json::parse(fits.out);
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  EXPECT_LE(j["memory"]["peak_bytes"].get<double>(), 80.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(j["memory"]["capacity_bytes"].get<double>(), 80.0 * 1024 * 1024 * 1024);
  // The report's peak is the largest of the ranks' peaks.
  double most = 0;
  for (const auto& rank : j["ranks"]) most = std::max(most, rank["memory_peak_bytes"].get<double>());
  EXPECT_EQ(j["memory"]["peak_bytes"].get<double>(), most);
  const auto& b = j["memory"]["breakdown"];
  EXPECT_NEAR(b["weights_bytes"].get<double>() + b["grads_bytes"].get<double>() + b["optimizer_bytes"].get<double>() +
                  b["buffers_bytes"].get<double>() + b["activations_bytes"].get<double>() +
                  b["recompute_bytes"].get<double>(),
              most, 1e-6 * most);

  const Result over = run("simulate --quiet --strict --set parallel.recompute=none");
  EXPECT_EQ(over.code, 3);
  EXPECT_NE(over.out.find("DOES NOT FIT"), std::string::npos);
  // One unit in the message: the peak in GiB like the capacity (it once said "113.5 GB, over
  // hardware.memory_GiB 80 GiB"); the report's peak line gives the same GiB figure.
  EXPECT_NE(over.err.find(" GiB, over hardware.memory_GiB 80 GiB (--strict)"), std::string::npos) << over.err;
  EXPECT_EQ(over.err.find(" GB"), std::string::npos) << over.err;
  // Without --strict the same plan reports and exits 0.
  EXPECT_EQ(run("simulate --quiet --set parallel.recompute=none").code, 0);
}

TEST(MemoryCli, RooflinePrintsTheStaticEstimate) {
  const Result text = run("roofline");
  EXPECT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("memory (static estimate"), std::string::npos);
  const Result js = run("roofline --json");
  ASSERT_EQ(js.code, 0);
  const auto m = nlohmann::json::parse(js.out)["memory"];
  EXPECT_EQ(m["in_flight_microbatches"].get<double>(), 8.5);  // DualPipeV: PP + 1/2
  EXPECT_TRUE(m["fits"].get<bool>());
  // Full recompute keeps only each layer's input: far less than DeepSeek's policy.
  const Result full = run("roofline --json --set parallel.recompute=full");
  EXPECT_LT(nlohmann::json::parse(full.out)["memory"]["activations_bytes"].get<double>(),
            0.5 * m["activations_bytes"].get<double>());
}

TEST(MemoryCli, TraceHasAMemoryCounterPerGpu) {
  const std::string path = stepsim::test::process_scratch().file("mem_trace.json");
  const Result r = run("simulate --quiet --json --trace " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::ifstream in(path);
  const auto trace = nlohmann::json::parse(in);
  std::map<std::string, double> most;  // counter name -> highest value, GB
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C") most[e["name"].get<std::string>()] = std::max(most[e["name"].get<std::string>()], e["args"]["GB"].get<double>());
  // One counter per simulated GPU, whose highest value is that GPU's reported peak.
  ASSERT_EQ(most.size(), j["ranks"].size());
  for (const auto& rank : j["ranks"]) {
    const std::string name = "memory GPU " + std::to_string(rank["rank"].get<int64_t>());
    ASSERT_TRUE(most.count(name)) << name;
    EXPECT_NEAR(most[name], rank["memory_peak_bytes"].get<double>() / 1e9, 1e-5) << name;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace stepsim
