// Stragglers against closed forms written here: a slow last stage of a 1F1B pipeline, a slow
// window on one GPU, a NIC at half bandwidth under a pure transfer, a NIC down on a model step,
// and jitter that averages out. Each simulation runs in a forked child.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

const RankResult& rank_of(const SimResult& r, int64_t id) {
  for (const RankResult& rr : r.ranks)
    if (rr.rank == id) return rr;
  throw std::runtime_error("rank not simulated");
}

// 1F1B without communication, the last stage's GPU at 80 % clock: its chunks take F/c and B/c.
// It starts after the forward of microbatch 0 crossed the PP-1 other stages, then never idles (it
// alternates F and B, and the upstream round trip F + B it waits on is shorter than F/c + B/c),
// and the last backward then crosses the PP-1 other stages:
//   T = (PP-1) F + m (F + B) / c + (PP-1) B.
TEST(Stragglers, SlowLastStageOf1F1BMatchesClosedForm) {
  const int pp = 4, m = 8;
  const double f = 1, b = 2, c = 0.8;
  Synthetic s{.pp = pp, .microbatches = m, .f_s = f, .b_s = b, .w_s = 0,
              .extra = {"scenario.stragglers=[{gpu: 3, clock: 0.8}]"}};
  const SimResult r = run_synthetic(s);
  const double expected = (pp - 1) * (f + b) + m * (f + b) / c;  // 39 s
  EXPECT_NEAR(r.step_time_s, expected, 1e-9 * expected);
  // The baseline is the unperturbed closed form (m + PP - 1)(F + B) = 33 s.
  EXPECT_NEAR(r.stragglers.baseline_step_s, (m + pp - 1) * (f + b), 1e-9 * expected);
  EXPECT_NEAR(rank_of(r, 3).compute_s, m * (f + b) / c, 1e-9 * expected);
  EXPECT_NEAR(rank_of(r, 0).compute_s, m * (f + b), 1e-9 * expected);
  expect_exact_split(r);
  // Stage 2 waits on the slow stage: its longest waits are on GPU 3.
  bool found = false;
  for (const RankWait& w : r.stragglers.rank_waits)
    if (w.rank == 2) {
      found = true;
      EXPECT_EQ(w.peer, 3);
      // In steady state stage 2 idles (F + B)/c - (F + B) per microbatch waiting for stage 3.
      EXPECT_GE(w.waited_s, (m - 1) * (f + b) * (1 / c - 1) - 1e-9);
    }
  EXPECT_TRUE(found);
  // Every other stage's waits trace back to the slow GPU, and it heads the root causes.
  for (const RankWait& w : r.stragglers.rank_waits)
    if (w.rank != 3) EXPECT_EQ(w.root, 3) << "rank " << w.rank;
  ASSERT_FALSE(r.stragglers.root_causes.empty());
  EXPECT_EQ(r.stragglers.root_causes[0].gpu, 3);
}

// One GPU alone (PP = 1) runs m(F + B) back to back; at half clock in [2 s, 4 s) it does one
// second of work in those two, so the step ends one second later. A window after the step changes
// nothing; a straggler from 20 s on runs the last 4 s of work at half speed.
TEST(Stragglers, WindowOnlySlowsTheWindow) {
  Synthetic s{.pp = 1, .microbatches = 8, .f_s = 1, .b_s = 2, .w_s = 0};
  const double base = 8 * 3.0;
  s.extra = {"scenario.stragglers=[{gpu: 0, clock: 0.5, from_s: 2, to_s: 4}]"};
  EXPECT_NEAR(run_synthetic(s).step_time_s, base + 1, 1e-9 * base);
  s.extra = {"scenario.stragglers=[{gpu: 0, clock: 0.5, from_s: 100, to_s: 200}]"};
  EXPECT_NEAR(run_synthetic(s).step_time_s, base, 1e-9 * base);
  s.extra = {"scenario.stragglers=[{gpu: 0, clock: 0.5, from_s: 20}]"};
  EXPECT_NEAR(run_synthetic(s).step_time_s, 20 + 4 / 0.5, 1e-9 * base);
  // Two items on one GPU multiply: 0.5 x 0.5 in [2, 4) does half a second of work there.
  s.extra = {"scenario.stragglers=[{gpu: 0, clock: 0.5, from_s: 2, to_s: 4}, {node: 0, clock: 0.5, from_s: 2, to_s: 4}]"};
  EXPECT_NEAR(run_synthetic(s).step_time_s, base + 1.5, 1e-9 * base);
}

// Two ranks, one microbatch, negligible compute, a large pipeline send each way (rank r sits
// alone on node r): the step is 2 (F + B) + 2 bytes / bandwidth. Rank 1's NIC at half bandwidth
// doubles both transfers (the send into it and the gradient out of it).
TEST(Stragglers, HalfBandwidthNicDoublesAPureTransfer) {
  Synthetic s{.pp = 2, .microbatches = 1, .f_s = 1e-3, .b_s = 2e-3, .w_s = 0, .send_bytes = 10e9,
              .extra = {"hardware.ib_GBps=50", "hardware.ib_latency_s=0", "scenario.stragglers=[{node: 1, nic_GBps: 25}]"}};
  const SimResult r = run_synthetic(s);
  const double compute = 2 * (s.f_s + s.b_s), transfer = s.send_bytes / 50e9;
  EXPECT_NEAR(r.stragglers.baseline_step_s, compute + 2 * transfer, 1e-6 * transfer);
  EXPECT_NEAR(r.step_time_s, compute + 2 * (2 * transfer), 1e-6 * transfer);
}

// A NIC down on a small model step (2 nodes, PP 2 across them): the step completes, the GPU's
// pipeline traffic goes through its neighbour's NIC and the report says how much.
TEST(Stragglers, NicDownReroutesThroughANeighbour) {
  const std::vector<std::string> sets = {
      "cluster.nodes=2",          "parallel.pp=2",        "parallel.ep=8",     "parallel.microbatches=4",
      "train.global_batch=32",    "model.num_hidden_layers=8", "scenario.stragglers=[{gpu: 3, nic: down}]"};
  const Plan plan = load_plan(default_config_path(), sets);
  const SimResult r = in_child([&] { return simulate(plan, SimOptions{true, false}); });
  EXPECT_EQ(r.ranks.size(), 16u);  // full mode: every GPU
  expect_exact_split(r);
  ASSERT_EQ(r.stragglers.detours.size(), 1u);
  EXPECT_EQ(r.stragglers.detours[0].gpu, 3);
  EXPECT_EQ(r.stragglers.detours[0].via, 4);  // the next GPU on node 0
  EXPECT_GT(r.stragglers.rerouted_bytes, 0);
  EXPECT_EQ(r.stragglers.rerouted_bytes, r.stragglers.detours[0].bytes);
  // Sharing GPU 4's NIC cannot make the step faster than the unperturbed one.
  EXPECT_GT(r.stragglers.baseline_step_s, 0);
  EXPECT_GE(r.step_time_s, r.stragglers.baseline_step_s * (1 - 1e-9));
}

// A synchronous step: FSDP on 16 GPUs, where every layer's all-gather and reduce-scatter waits
// for every GPU. With the links made practically free (10^6 GB/s) the step is the slowest GPU's
// compute, so one GPU at 80 % clock makes the whole step 1 / 0.8 = 1.25 x the unperturbed one
// (the transfers left take ~1e-5 of the step: tolerance 1e-3). At the real link speeds its compute
// still scales by exactly 1 / 0.8, and communication hides part of the loss: the step grows by
// more than 0 and by at most the slow GPU's extra compute.
std::vector<std::string> fsdp16(std::vector<std::string> more) {
  std::vector<std::string> sets = {"cluster.nodes=2",         "schedule=fsdp",          "parallel.pp=1",
                                   "parallel.zero=3",         "parallel.ep=16",         "parallel.microbatches=2",
                                   "train.global_batch=32",   "model.num_hidden_layers=8", "parallel.split_lone_chunks=false"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

TEST(Stragglers, OneGpuAt80PercentSlowsASynchronousStepBy1Over08) {
  const Plan fast_links = load_plan(default_config_path(),
                                    fsdp16({"hardware.ib_GBps=1e6", "hardware.nvlink_GBps=1e6",
                                            "scenario.stragglers=[{gpu: 5, clock: 0.8}]"}));
  const SimResult r = in_child([&] { return simulate(fast_links, SimOptions{true, false}); });
  ASSERT_EQ(r.ranks.size(), 16u);
  EXPECT_NEAR(r.step_time_s / r.stragglers.baseline_step_s, 1 / 0.8, 1e-3);
  EXPECT_NEAR(rank_of(r, 5).compute_s, rank_of(r, 0).compute_s / 0.8, 1e-9 * r.step_time_s);
  ASSERT_FALSE(r.stragglers.root_causes.empty());
  EXPECT_EQ(r.stragglers.root_causes[0].gpu, 5);
  expect_exact_split(r);

  const Plan real_links = load_plan(default_config_path(), fsdp16({"scenario.stragglers=[{gpu: 5, clock: 0.8}]"}));
  const SimResult q = in_child([&] { return simulate(real_links, SimOptions{true, false}); });
  const double extra = rank_of(q, 5).compute_s - rank_of(q, 0).compute_s;
  EXPECT_NEAR(extra, 0.25 * rank_of(q, 0).compute_s, 1e-9 * q.step_time_s);
  EXPECT_GT(q.step_time_s, q.stragglers.baseline_step_s);
  EXPECT_LE(q.step_time_s, q.stragglers.baseline_step_s + extra + 1e-9);
  expect_exact_split(q);
}

// NIC faults name the GPUs whose NIC is faulty. A small model step on 4 nodes (PP 2 across node
// pairs, EP 16 over each pair) where the only fault is by construction a NIC: every wait the fault
// causes traces back to it, however far the lateness travels (pipeline sends, all-to-all partners,
// the ops that follow a late one).
std::vector<std::string> four_nodes(const std::string& stragglers) {
  return {"cluster.nodes=4",         "parallel.pp=2",           "parallel.ep=16", "parallel.microbatches=4",
          "train.global_batch=64",   "model.num_hidden_layers=8", "scenario.stragglers=" + stragglers};
}

TEST(Stragglers, SlowNicsOfANodeAreTheRootCauses) {
  // Node 1 = GPUs 8..15, each NIC at a tenth of its 50 GB/s.
  const Plan plan = load_plan(default_config_path(), four_nodes("[{node: 1, nic_GBps: 5}]"));
  const SimResult r = in_child([&] { return simulate(plan, SimOptions{true, false}); });
  ASSERT_EQ(r.ranks.size(), 32u);
  ASSERT_GT(r.step_time_s, r.stragglers.baseline_step_s);
  // The roots are exactly node 1's GPUs: a wait that traces back to a healthy GPU is the
  // schedule's own and names no root.
  std::vector<int64_t> roots;
  for (const WaitedFor& w : r.stragglers.root_causes) roots.push_back(w.gpu);
  std::sort(roots.begin(), roots.end());
  EXPECT_EQ(roots, (std::vector<int64_t>{8, 9, 10, 11, 12, 13, 14, 15}));
  // Every GPU off node 1 that waited traces its waits back to node 1 most.
  for (const RankWait& w : r.stragglers.rank_waits)
    if (w.rank / 8 != 1 && w.root_s > 0) EXPECT_EQ(w.root / 8, 1) << "rank " << w.rank << " root " << w.root;
}

TEST(Stragglers, NicDownIsTheRootCauseNotItsNeighbours) {
  // GPU 3's NIC is down: its traffic shares GPU 4's NIC, so both NICs' flows run slow; the fault,
  // and so the root of the waits, is GPU 3's.
  const Plan plan = load_plan(default_config_path(), four_nodes("[{gpu: 3, nic: down}]"));
  const SimResult r = in_child([&] { return simulate(plan, SimOptions{true, false}); });
  ASSERT_GT(r.step_time_s, r.stragglers.baseline_step_s);
  ASSERT_EQ(r.stragglers.root_causes.size(), 1u);  // not GPU 4, which lends its NIC
  EXPECT_EQ(r.stragglers.root_causes[0].gpu, 3);
}

// Mean-one lognormal jitter: the sum of many jittered chunks stays near the unjittered sum.
// 200 chunks of F = 1, B = 2 with sigma 0.1: each chunk's std is about 0.1 x its length, so the
// total (600 s) has a std of about sqrt(200 (0.01 + 0.04)) = 3.2 s; allow 15 s.
TEST(Stragglers, JitterHasMeanOneAndFollowsTheSeed) {
  Synthetic s{.pp = 1, .microbatches = 200, .f_s = 1, .b_s = 2, .w_s = 0,
              .extra = {"scenario.jitter_sigma=0.1", "scenario.seed=11"}};
  const SimResult a = run_synthetic(s);
  EXPECT_NEAR(a.ranks[0].compute_s, 600, 15);
  EXPECT_NE(a.ranks[0].compute_s, 600);
  EXPECT_EQ(run_synthetic(s).step_time_s, a.step_time_s);  // same seed, same draws
  s.extra = {"scenario.jitter_sigma=0.1", "scenario.seed=12"};
  EXPECT_NE(run_synthetic(s).step_time_s, a.step_time_s);
}

}  // namespace
}  // namespace stepsim::test
