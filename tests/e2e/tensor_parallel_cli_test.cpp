// The check, end to end: Llama 3.1 405B on 8,192 GPUs (TP 8, PP 16, DP 64) through the
// roofline, and a TP plan simulated with its tensor-parallel transfers in the trace; bad values of
// the parallelism keys rejected in one line with exit code 2.
#include <gtest/gtest.h>

#include "tests/scratch_dir.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli_runner.hpp"

namespace {

using stepsim::test::run_stepsim;

TEST(TensorParallelCli, Llama405bRooflineHasTheClosedFormTpTerm) {
  const auto r = run_stepsim("roofline workloads/llama-3.1-405b.yaml --json", STEPSIM_SOURCE_DIR);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["plan"]["gpus"], 8192);
  EXPECT_EQ(j["plan"]["tp"], 8);
  EXPECT_EQ(j["plan"]["dp"], 64);
  // 126 layers x 10 collectives (4 forward, 6 backward with the weight gradients' re-gathers) x 32
  // microbatches / 16 ranks = 2520 per GPU, each 7/8 of one sequence's [8192, 16384] BF16
  // activations, over NVLink at 360 GB/s.
  const double bytes = 7.0 / 8.0 * 8192 * 16384 * 2;
  EXPECT_DOUBLE_EQ(j["tp"]["collectives_per_gpu"].get<double>(), 2520);
  EXPECT_DOUBLE_EQ(j["tp"]["bytes_per_collective"].get<double>(), bytes);
  EXPECT_NEAR(j["tp_comm_s"].get<double>(), 2520 * bytes / 360e9, 1e-9);
  // Weights of rank 0 (8 layers + embedding), each a TP shard: about 405e9 x 2 bytes / (16 x 8).
  EXPECT_NEAR(j["memory"]["weights_bytes"].get<double>(), 405e9 * 2 / 128, 0.15 * 405e9 * 2 / 128);
}

TEST(TensorParallelCli, SimulatedTpTransfersAppearInTheTrace) {
  const stepsim::test::ScratchDir dir;  // removed even when an assertion returns early
  const std::string trace = dir.file("trace.json");
  const auto r = run_stepsim("simulate workloads/llama-3.1-8b.yaml --set cluster.nodes=1 --set parallel.pp=1 "
                             "--set parallel.tp=8 --set train.global_batch=4 --set parallel.microbatches=2 "
                             "--json --quiet --trace " + trace,
                             STEPSIM_SOURCE_DIR);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  // TP transfers are on every layer's critical path: most of them stay exposed.
  EXPECT_GT(j["exposed_by_kind"]["tp_s"].get<double>(), 0.5 * j["tp_comm_s"].get<double>());
  EXPECT_EQ(j["exposed_by_kind"]["cp_s"].get<double>(), 0.0);
  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  EXPECT_NE(text.find("tp-allgather"), std::string::npos);
  EXPECT_NE(text.find("tp-reducescatter"), std::string::npos);
}

// parallel.tp_comm_overlap: the report's exposed TP shrinks to what the pipelines leave (the
// roofline's closed form beside it), and the trace names the pieces.
TEST(TensorParallelCli, TpCommOverlapShowsInTheReportAndTheTrace) {
  const stepsim::test::ScratchDir dir;
  const std::string trace = dir.file("trace.json");
  const std::string plan = "simulate workloads/llama-3.1-8b.yaml --set cluster.nodes=1 --set parallel.pp=1 "
                           "--set parallel.tp=8 --set train.global_batch=4 --set parallel.microbatches=2 --json --quiet ";
  const auto off = run_stepsim(plan, STEPSIM_SOURCE_DIR);
  const auto on = run_stepsim(plan + "--set parallel.tp_comm_overlap=true --trace " + trace, STEPSIM_SOURCE_DIR);
  ASSERT_EQ(off.code, 0) << off.err;
  ASSERT_EQ(on.code, 0) << on.err;
  const auto a = nlohmann::json::parse(off.out), b = nlohmann::json::parse(on.out);
  EXPECT_LT(b["exposed_by_kind"]["tp_s"].get<double>(), a["exposed_by_kind"]["tp_s"].get<double>());
  EXPECT_LT(b["step_time_s"].get<double>(), a["step_time_s"].get<double>());
  EXPECT_NEAR(b["tp_comm_s"].get<double>(), a["tp_comm_s"].get<double>(), 1e-9);  // the same bytes
  EXPECT_EQ(b["roofline"]["plan"]["tp_comm_overlap"], true);
  EXPECT_EQ(b["roofline"]["overlap"]["tp_comm_overlap"]["enabled"], true);
  EXPECT_LT(b["roofline"]["overlap"]["tp_comm_overlap"]["exposed_on_s"].get<double>(),
            b["roofline"]["overlap"]["tp_comm_overlap"]["exposed_off_s"].get<double>());
  std::ifstream in(trace);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  for (const char* name : {"tp-allgather-ring", "tp-reducescatter-split", "tp-allgather-wgrad", " ub-ag", " ub-mid",
                           " ub-rs", "\"ub_piece\":1"})
    EXPECT_NE(text.find(name), std::string::npos) << name;
}

// Context parallelism's exchanges by type in the report and the trace: p2p's ring beside the
// attention's pieces, allgather's collectives, a2a's all-to-alls (the same bytes for the first two).
TEST(TensorParallelCli, CpCommTypesShowInTheReportAndTheTrace) {
  const stepsim::test::ScratchDir dir;
  const std::string plan = "simulate workloads/llama-3.1-8b.yaml --set cluster.nodes=1 --set parallel.pp=1 "
                           "--set parallel.tp=2 --set parallel.cp=4 --set train.global_batch=4 "
                           "--set parallel.microbatches=2 --json --quiet ";
  std::map<std::string, nlohmann::json> runs;
  for (const char* type : {"p2p", "allgather", "a2a"}) {
    const std::string trace = dir.file(std::string(type) + ".json");
    const auto r = run_stepsim(plan + "--set parallel.cp_comm_type=" + type + " --trace " + trace, STEPSIM_SOURCE_DIR);
    ASSERT_EQ(r.code, 0) << r.err;
    runs[type] = nlohmann::json::parse(r.out);
    EXPECT_EQ(runs[type]["roofline"]["cp"]["comm_type"], type);
    std::ifstream in(trace);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    const std::string exchange = std::string(type) == "p2p" ? "cp-ring-kv" : std::string(type) == "a2a" ? "cp-alltoall" : "cp-allgather-kv";
    EXPECT_NE(text.find(exchange), std::string::npos) << type;
    EXPECT_NE(text.find(" cp-core"), std::string::npos) << type;
    EXPECT_NE(text.find("\"cp_piece\":5"), std::string::npos) << type;
    EXPECT_EQ(text.find(" cp-last") != std::string::npos, std::string(type) == "p2p") << type;
  }
  EXPECT_NEAR(runs["p2p"]["cp_comm_s"].get<double>(), runs["allgather"]["cp_comm_s"].get<double>(),
              1e-9 * runs["allgather"]["cp_comm_s"].get<double>());
  // Inside one node the ring hides behind the attention; allgather's collectives do not.
  EXPECT_LT(runs["p2p"]["exposed_by_kind"]["cp_s"].get<double>(), runs["allgather"]["exposed_by_kind"]["cp_s"].get<double>());
}

TEST(TensorParallelCli, BadParallelValuesAreOneLineExitTwo) {
  const std::string llama = "roofline workloads/llama-3.1-8b.yaml ";
  const struct {
    std::string args, key;
  } cases[] = {
      {"roofline --set parallel.tp=0", "parallel.tp"},
      {"roofline --set parallel.tp=eight", "parallel.tp"},
      {"roofline --set parallel.tp=3", "parallel.tp"},                      // does not divide a stage's 256 GPUs
      {llama + "--set parallel.pp=1 --set parallel.tp=64", "parallel.tp"},  // 32 heads
      {llama + "--set cluster.gpus_per_node=12 --set cluster.nodes=4 --set parallel.pp=1 --set parallel.tp=8",
       "parallel.tp"},                                                       // TP groups would straddle nodes
      {"roofline --set parallel.cp=0", "parallel.cp"},
      {"roofline --set parallel.cp=1.5", "parallel.cp"},
      {llama + "--set parallel.cp=2 --set train.seq_len=8190", "parallel.cp"},  // 2 x cp chunks
      {"roofline --set parallel.zero=4", "parallel.zero"},
      {"roofline --set parallel.fsdp_shard_size=-1", "parallel.fsdp_shard_size"},
      {"roofline --set parallel.fsdp_shard_size=8", "parallel.fsdp_shard_size"},  // ZeRO-1 plan
      {"roofline --set schedule=fsdp --set parallel.split_lone_chunks=false --set parallel.pp=1 --set parallel.zero=3 --set parallel.microbatches=8 "
       "--set parallel.fsdp_shard_size=48",
       "parallel.fsdp_shard_size"},  // does not divide 2048
      {"roofline --set schedule=fsdp --set parallel.split_lone_chunks=false --set parallel.pp=1 --set parallel.zero=3 --set parallel.microbatches=8 "
       "--set parallel.fsdp_shard_size=32",
       "parallel.fsdp_shard_size"},  // EP groups of 64 would straddle shard groups
      {"roofline workloads/deepseek-profile-capture.yaml --set parallel.zero=2", "parallel.zero"},
      {"roofline workloads/deepseek-profile-capture.yaml --set parallel.tp=8", "parallel.tp"},
  };
  for (const auto& c : cases) {
    const auto r = run_stepsim(c.args, STEPSIM_SOURCE_DIR);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_TRUE(r.out.empty()) << c.args;
    EXPECT_NE(r.err.find(c.key), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ": " << r.err;
  }
}

}  // namespace
