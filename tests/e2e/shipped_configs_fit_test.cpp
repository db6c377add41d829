// Every plan the repository ships fits in its GPUs' memory as shipped: a newcomer's second command
// must not show an impossible plan. The roofline's static estimate of the busiest rank for every
// config (and the two example jobs once imported), and the replay's peak (`simulate --strict`
// exits 3 over capacity) for the two Llama plans, which did not fit before issue 29.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace stepsim::test {
namespace {

namespace fs = std::filesystem;

void expect_fits(const std::string& config) {
  const CliResult r = run_stepsim("roofline --json '" + config + "'");
  ASSERT_EQ(r.code, 0) << config << "\n" << r.err;
  const nlohmann::json m = nlohmann::json::parse(r.out).at("memory");
  EXPECT_TRUE(m.at("fits").get<bool>()) << config << ": " << m.at("total_bytes").get<double>() / (1 << 30)
                                        << " GiB on rank " << m.at("rank") << " of "
                                        << m.at("capacity_bytes").get<double>() / (1 << 30) << " GiB";
}

TEST(ShippedConfigsFit, EveryConfigAsShipped) {
  const fs::path root = STEPSIM_SOURCE_DIR;
  int configs = 0;
  for (const fs::path& dir : {root / "workloads", root / "workloads" / "megatron"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml") {
        expect_fits(e.path().string());
        ++configs;
      }
  EXPECT_GE(configs, 14);
}

TEST(ShippedConfigsFit, TheExampleJobsOnceImported) {
  ScratchDir dir;
  const std::string src = STEPSIM_SOURCE_DIR;
  const std::string megatron = dir.file("megatron.yaml"), titan = dir.file("torchtitan.yaml");
  ASSERT_EQ(run_stepsim("import megatron " + src + "/workloads/examples/megatron-llama3-70b.sh -o " + megatron).code, 0);
  ASSERT_EQ(run_stepsim("import torchtitan " + src + "/workloads/examples/torchtitan-llama3-70b.toml --gpus 64 -o " + titan).code, 0);
  expect_fits(megatron);
  expect_fits(titan);
}

TEST(ShippedConfigsFit, TheLlamaPlansReplayWithinTheirGpus) {
  for (const char* config : {"workloads/llama-3.1-8b.yaml", "workloads/llama-3.1-405b.yaml"}) {
    const CliResult r = run_stepsim(std::string("simulate --quiet --strict ") + config);
    EXPECT_EQ(r.code, 0) << config << "\n" << r.err << r.out.substr(r.out.find("memory per GPU") == std::string::npos ? 0 : r.out.find("memory per GPU"));
  }
}

}  // namespace
}  // namespace stepsim::test
