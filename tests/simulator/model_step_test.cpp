// The model workload replayed end to end (reduced mode unless stated): FLOPs conserved against a
// hand count, the per-rank split, the seed's FSDP "pincer", 1F1B's bubble and exposed
// all-to-all, symmetry (reduced = full) and determinism. Each simulation runs in a forked child.
#include <gtest/gtest.h>

#include <algorithm>

#include "simulator/roofline/roofline.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

Plan model_plan(std::vector<std::string> sets = {}) { return load_plan(default_config_path(), sets); }

SimResult simulate_plan(const Plan& plan) {
  return in_child([&] { return simulate(plan, SimOptions{true, false}); });
}

// The same plan in reduced and in full mode.
Plan in_mode(std::vector<std::string> sets, const char* mode) {
  sets.push_back(std::string("sim.mode=") + mode);
  return model_plan(sets);
}

double mean(const SimResult& r, double RankResult::*f) {
  double s = 0;
  for (const auto& rank : r.ranks) s += rank.*f;
  return s / double(r.ranks.size());
}

// Whole-step speed-of-light compute of one GPU for DeepSeek-V3 at the seed's batch, by hand:
// 6ND (BF16 part at the BF16 rate) + attention core (QK^T x4, PV x3) + MLA up-projection recompute.
double deepseek_compute_by_hand() {
  const double tokens = 15360.0 * 4096, gpus = 2048, fp8 = 1456.6e12 * gpus, bf16 = 757.7e12 * gpus;
  const double attn = 7168.0 * 1536 + 7168.0 * 576 + 1536.0 * 128 * 192 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const double expert = 3.0 * 7168 * 2048, router = 256.0 * 7168 + 256, head = 129280.0 * 7168;
  // Matmul parameters only: the simulator charges no FLOPs to RMSNorm weights.
  const double n = 58 * (attn + router + 9 * expert) + 3 * (attn + 3.0 * 7168 * 18432) + head;
  const double bf16_params = 58 * router + head;
  const double qk = 4096.0 * 4096 * 128 * 192, pv = 4096.0 * 4096 * 128 * 128;
  return (6 * (n - bf16_params) * tokens + 2 * 61 * (1536.0 * 128 * 192 + 512.0 * 128 * 256) * tokens) / fp8 +
         (6 * bf16_params * tokens + (4 * qk + 3 * pv) * 61 * 15360) / bf16;
}

TEST(ModelStep, DefaultDualPipeVConservesComputeAndSplitsEveryRank) {
  const SimResult r = simulate_plan(model_plan());
  ASSERT_EQ(r.ranks.size(), 8u);  // reduced: one GPU per pipeline rank
  expect_exact_split(r);
  // Every FLOP of the step is on some rank: the mean over ranks is the by-hand per-GPU compute.
  EXPECT_NEAR(mean(r, &RankResult::compute_s), deepseek_compute_by_hand(), 1e-6 * deepseek_compute_by_hand());
  // The step cannot beat its busiest rank, nor the roofline's perfect overlap (within 2 %).
  double busiest = 0;
  for (const auto& rank : r.ranks) busiest = std::max(busiest, rank.compute_s);
  EXPECT_GE(r.step_time_s, busiest);
  const Roofline roof = compute_roofline(model_plan());
  EXPECT_GE(r.step_time_s, 0.98 * roof.step_time_s);
  // EP traffic really moves: each rank's all-to-all time is at least the bytes over its NIC.
  EXPECT_GT(r.comm_s[ops::CommClass::Ep], 0.9 * roof.ep_comm_s);
}

TEST(ModelStep, FsdpWithEightMicrobatchesIsCommsBoundLikeTheSeed) {
  const Plan plan = model_plan({"schedule=fsdp", "parallel.split_lone_chunks=false", "parallel.pp=1", "parallel.zero=3", "parallel.microbatches=8"});
  const SimResult r = simulate_plan(plan);
  expect_exact_split(r);
  // The seed's closed form (69 %): comm = EP + 8 x (2 AG + RS), exposed share = (comm - compute) / comm.
  const Roofline roof = compute_roofline(plan);
  const double comm = roof.ep_comm_s + 8 * roof.dp.fsdp_per_microbatch_s;
  const double seed_share = (comm - roof.compute_s) / comm;
  EXPECT_NEAR(seed_share, 0.69, 0.005);
  const double share = mean(r, &RankResult::exposed_comm_s) / r.step_time_s;
  EXPECT_GE(share, seed_share);
  EXPECT_LE(share, seed_share + 0.10);
  // 15360 sequences over 2048 GPUs: half the GPUs hold 8, half 7 (their experts still see the
  // group's mean load), and all FLOPs of the step are still done: the mean is the by-hand compute.
  double lo = 1e30, hi = 0;
  for (const auto& rank : r.ranks) {
    lo = std::min(lo, rank.compute_s);
    hi = std::max(hi, rank.compute_s);
  }
  EXPECT_GT(hi / lo, 1.03);
  EXPECT_NEAR(mean(r, &RankResult::compute_s), deepseek_compute_by_hand(), 1e-6 * deepseek_compute_by_hand());
}

TEST(ModelStep, OneFOneBShowsItsBubbleAndTheAllToAllItCannotHide) {
  // As the reference 1F1B runs it: every chunk whole (LoneChunkSplit covers the halves).
  const Plan plan = model_plan({"schedule=1f1b", "parallel.split_lone_chunks=false"});
  const SimResult r = simulate_plan(plan);
  expect_exact_split(r);
  const auto critical = std::find_if(r.ranks.begin(), r.ranks.end(),
                                     [&](const RankResult& x) { return x.rank == r.critical_rank; });
  ASSERT_NE(critical, r.ranks.end());
  // Without F&B pairs nothing hides the all-to-all: most of the roofline's EP time is exposed.
  const Roofline roof = compute_roofline(plan);
  EXPECT_GT(critical->exposed_comm_s, 0.6 * roof.ep_comm_s);
  // 1F1B idles (PP-1)/m of a rank's busy time (its compute and the comm it waits through).
  const double busy = critical->compute_s + critical->exposed_comm_s;
  EXPECT_NEAR(critical->bubble_s / busy, 7.0 / 60.0, 0.02);
}

TEST(ModelStep, ReducedReplayMatchesFullReplay) {
  // 32 nodes, PP 4 DualPipeV, EP 32: 8 replicas of 4 ranks; full simulates all 256 GPUs.
  const std::vector<std::string> sets = {"cluster.nodes=32", "parallel.pp=4", "parallel.ep=32",
                                         "train.global_batch=512", "parallel.microbatches=8"};
  const SimResult reduced = simulate_plan(in_mode(sets, "reduced"));
  const SimResult full = simulate_plan(in_mode(sets, "full"));
  EXPECT_EQ(reduced.ranks.size(), 4u);
  EXPECT_EQ(full.ranks.size(), 256u);
  EXPECT_NEAR(reduced.step_time_s, full.step_time_s, 0.01 * full.step_time_s);
  EXPECT_LT(reduced.activities, full.activities / 10);
}

TEST(ModelStep, ReducedFsdpWithUnevenBatchMatchesFull) {
  // 192 sequences over 128 GPUs: 1.5 each, so half the GPUs run a lighter second round.
  const std::vector<std::string> sets = {"cluster.nodes=16", "parallel.pp=1", "schedule=fsdp", "parallel.split_lone_chunks=false", "parallel.zero=3",
                                         "parallel.ep=32", "train.global_batch=192", "parallel.microbatches=2"};
  const SimResult reduced = simulate_plan(in_mode(sets, "reduced"));
  const SimResult full = simulate_plan(in_mode(sets, "full"));
  EXPECT_EQ(reduced.ranks.size(), 32u);
  EXPECT_NEAR(reduced.step_time_s, full.step_time_s, 0.01 * full.step_time_s);
}

TEST(ModelStep, CommKernelsTakeSmsFromCompute) {
  const SimResult sol = simulate_plan(model_plan());
  const SimResult taxed = simulate_plan(model_plan({"hardware.comm_sms=20"}));
  // Compute stretches by at most 132/112 (only while comm is in flight), and really does stretch.
  const double ratio = mean(taxed, &RankResult::compute_s) / mean(sol, &RankResult::compute_s);
  EXPECT_GT(ratio, 1.05);
  EXPECT_LE(ratio, 132.0 / 112.0 + 1e-9);
}

// A release's DeepEP SMs (software.deepep_sms: Megatron-Core launches DeepEP on 20) are held by
// DeepEP's kernels alone: compute runs on the other SMs only while an expert all-to-all is in flight,
// so it stretches, but less than when every transfer (the pipeline's sends too) holds the same SMs;
// HybridEP's kernels are charged none.
TEST(ModelStep, DeepEpSmsTaxComputeOnlyWhileExpertTransfersFly) {
  const SimResult sol = simulate_plan(model_plan());
  const SimResult deepep = simulate_plan(model_plan({"software.deepep_sms=20"}));
  const SimResult every = simulate_plan(model_plan({"hardware.comm_sms=20"}));
  const double ratio = mean(deepep, &RankResult::compute_s) / mean(sol, &RankResult::compute_s);
  EXPECT_GT(ratio, 1.02);
  EXPECT_LT(ratio, mean(every, &RankResult::compute_s) / mean(sol, &RankResult::compute_s));
  EXPECT_EQ(model_plan({"software.deepep_sms=20"}).taxed_comm_sms(), 20);
  const Plan hybrid = model_plan({"software.deepep_sms=20", "parallel.moe_flex_backend=hybridep"});
  EXPECT_EQ(hybrid.taxed_comm_sms(), 0);
  EXPECT_NEAR(mean(simulate_plan(hybrid), &RankResult::compute_s), mean(sol, &RankResult::compute_s),
              1e-9 * mean(sol, &RankResult::compute_s));
  // The Megatron profiles carry DeepEP's 20 (QW-H-008 runs DeepEP, QW-H-002 HybridEP); the seed's
  // DeepSeek profile none (its own DeepEP SMs are the preset's hardware.comm_sms, 0 in the seed).
  const std::string published = std::string(STEPSIM_SOURCE_DIR) + "/workloads/published/";
  EXPECT_EQ(load_plan(published + "QW-H-008.yaml", {}).taxed_comm_sms(), 20);
  EXPECT_EQ(load_plan(published + "QW-H-002.yaml", {}).taxed_comm_sms(), 0);
  EXPECT_EQ(model_plan().taxed_comm_sms(), 0);
}

TEST(ModelStep, DenseModelRunsWithoutExpertTraffic) {
  const Plan plan = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                              {"sim.compute=speed-of-light"});
  const SimResult r = simulate_plan(plan);
  expect_exact_split(r);
  EXPECT_DOUBLE_EQ(r.comm_s[ops::CommClass::Ep], 0.0);
  // The roofline's N counts RMSNorm weights (as the seed does), the replay charges only GEMMs:
  // 65 x 4096 of 8e9 parameters, 3e-5 relative.
  EXPECT_NEAR(mean(r, &RankResult::compute_s), compute_roofline(plan).compute_s,
              1e-4 * compute_roofline(plan).compute_s);
}

// Without a pipeline nothing waits for another stage, so no idle time is bubble: the compute
// stream waits on its own transfers, some of them through others (a TP all-gather on its layer's
// FSDP gather, a CP all-gather on the TP one). Those were once bubble: with FSDP + TP 8 the
// gathers' time (5.8 s on the plan) was "waiting for other stages".
TEST(ModelStep, WithoutAPipelineNoWaitIsBubble) {
  const std::string llama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  const std::vector<std::string> small = {"model.num_hidden_layers=4", "parallel.pp=1"};
  const std::vector<std::vector<std::string>> plans = {
      {"cluster.nodes=2", "schedule=fsdp", "parallel.zero=3", "parallel.tp=8", "train.global_batch=8",
       "parallel.microbatches=2"},
      {"cluster.nodes=1", "parallel.tp=2", "parallel.cp=4", "train.global_batch=2", "parallel.microbatches=2"}};
  for (const auto& more : plans) {
    std::vector<std::string> sets = small;
    sets.insert(sets.end(), more.begin(), more.end());
    const SimResult r = simulate_plan(load_plan(llama, sets));
    for (const RankResult& rank : r.ranks) {
      EXPECT_NEAR(rank.bubble_s, 0.0, 1e-9 * r.step_time_s) << more[1] << " rank " << rank.rank;
      EXPECT_NEAR(rank.compute_s + rank.exposed_comm_s, r.step_time_s, 1e-9 * r.step_time_s) << more[1];
      EXPECT_GT(rank.exposed_s[ops::CommClass::Tp], 0.0);
    }
  }
}

}  // namespace
}  // namespace stepsim::test
