// What a replay runs is counted before it starts (engine::count_replay: every simulated GPU's
// program emitted as the engine consumes it), and both the replay-size guard and the progress
// line use that count. Reference: the ops and activities the replay itself counted as it ran
// them, in every mode the workload picks -- full, one data-parallel replica (reduced), one EP
// group (FSDP), EP group 0 of every rank (skewed routing), straggler groups -- where flows to and
// from mirrored GPUs count differently, across TP, CP, PP and FSDP.
#include <gtest/gtest.h>

#include "vocabulary/config_error.hpp"
#include "simulator/engine/replay_count.hpp"
#include "tests/simulator/sim_test_util.hpp"
#include "workloads/model/model_workload.hpp"

namespace stepsim::test {
namespace {

// A 6-layer DeepSeek-V3 on 16 nodes, 2 pipeline ranks of 1F1B, 4 microbatches.
std::vector<std::string> small_moe(const std::vector<std::string>& more) {
  std::vector<std::string> sets = {"model.num_hidden_layers=6", "cluster.nodes=16",       "parallel.pp=2",
                                   "schedule=1f1b",             "parallel.microbatches=4", "train.global_batch=256"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

// Llama 3.1 8B cut to 4 layers on 4 nodes: TP, CP and FSDP plans.
std::vector<std::string> small_dense(const std::vector<std::string>& more) {
  std::vector<std::string> sets = {"model.num_hidden_layers=4", "cluster.nodes=4", "train.global_batch=32",
                                   "train.seq_len=4096"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

void expect_count_matches_replay(const Plan& plan, const std::string& mode_prefix, const std::string& what) {
  const ModelWorkload w(plan);
  const engine::ReplayCount counted = engine::count_replay(w.platform(), w);
  const SimResult r = in_child([&] { return simulate(plan, SimOptions{true, false}); });
  EXPECT_EQ(r.mode.rfind(mode_prefix, 0), 0u) << what << ": " << r.mode;
  EXPECT_EQ(counted.gpus, int64_t(r.ranks.size())) << what;
  EXPECT_EQ(counted.activities, double(r.activities)) << what << " (" << r.mode << ")";
  EXPECT_EQ(counted.ops, double(r.ops)) << what;
  EXPECT_FALSE(counted.stopped) << what;
  EXPECT_GT(counted.activities, counted.ops / 2) << what;  // not the ops count by another name
}

TEST(ReplaySize, CountIsWhatTheReplayRunsInEveryMode) {
  const std::string moe = default_config_path();
  const std::string dense = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  const struct {
    std::string config;
    std::vector<std::string> sets;
    std::string mode;  // the mode the workload must pick, so each case tests what it names
    std::string what;
  } cases[] = {
      {moe, small_moe({"sim.mode=full", "sim.fidelity=fast"}), "full", "full, NVLink legs left out"},
      {moe, small_moe({"sim.mode=full", "sim.fidelity=exact"}), "full", "full, every flow"},
      {moe, small_moe({"sim.mode=full", "scenario.routing=zipf"}), "full", "full, skewed routing"},
      {moe, small_moe({}), "reduced", "one replica per rank: EP flows to mirrored replicas"},
      {moe, small_moe({"scenario.routing=zipf"}), "ep-groups", "skewed routing: EP group 0 of every rank"},
      {moe, small_moe({"parallel.ep=8", "scenario.stragglers=[{gpu: 5, clock: 0.8}]"}), "straggler-groups",
       "straggler groups"},
      {moe, small_moe({"parallel.ep=8", "scenario.stragglers=[{node: 1, nic_GBps: 20}]"}), "straggler-groups",
       "a slow NIC's group"},
      {moe, small_moe({"scenario.jitter_sigma=0.1"}), "full", "jitter: every GPU"},
      {moe, small_moe({"parallel.pp=1", "schedule=fsdp", "parallel.split_lone_chunks=false", "parallel.zero=3", "parallel.microbatches=2",
                       "train.global_batch=256"}),
       "ep-group", "FSDP: one EP group"},
      {dense, small_dense({"parallel.tp=8", "parallel.pp=2", "parallel.microbatches=4", "sim.mode=reduced"}),
       "reduced", "TP 8, PP 2"},
      {dense, small_dense({"parallel.tp=2", "parallel.cp=4", "parallel.pp=2", "parallel.microbatches=2"}),
       "reduced", "TP 2 x CP 4, PP 2"},
      {dense, small_dense({"parallel.tp=2", "parallel.cp=2", "parallel.pp=1", "schedule=fsdp", "parallel.zero=3",
                           "parallel.microbatches=1"}),
       "ep-group", "FSDP with TP 2 x CP 2"},
      {dense, small_dense({"parallel.tp=4", "parallel.pp=2", "schedule=interleaved", "parallel.microbatches=4",
                           "parallel.virtual_stages=2", "sim.mode=full"}),
       "full", "interleaved TP 4, full"},
  };
  for (const auto& c : cases) expect_count_matches_replay(load_plan(c.config, c.sets), c.mode, c.what);
}

// The count stops once it passes the limit it is asked about: the guard's work stays bounded by
// the limit however large the plan.
TEST(ReplaySize, CountStopsPastTheLimit) {
  const Plan plan = load_plan(default_config_path(), small_moe({"sim.mode=full"}));
  const ModelWorkload w(plan);
  const engine::ReplayCount all = engine::count_replay(w.platform(), w);
  const engine::ReplayCount part = engine::count_replay(w.platform(), w, all.activities / 4);
  EXPECT_TRUE(part.stopped);
  EXPECT_GT(part.activities, all.activities / 4);
  EXPECT_LT(part.activities, all.activities / 2);
  EXPECT_LT(part.gpus_counted, all.gpus_counted);
}

}  // namespace
}  // namespace stepsim::test
