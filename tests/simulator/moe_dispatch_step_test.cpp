// MoE dispatchers in the replay: Megatron's alltoall leaves every transfer of a lone microbatch
// exposed (worked out by hand from its bytes), the all-to-all overlap pairs backward and forward
// chunks so they hide each other's transfers, and expert TP gathers and scatters each layer's
// rows over its group.
#include <gtest/gtest.h>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

// DeepSeek-V3's layers, 4 of them, one 4096-token sequence per GPU, EP 16 over 2 nodes, IB at
// 1 GB/s and NVLink at 5 (slow_ep16_moe_run), Megatron's alltoall dispatcher.
TEST(MoeDispatchStep, AllToAllMovesKCopiesPerTokenAndNothingHidesThem) {
  const SimResult r = slow_ep16_moe_run({"parallel.moe_dispatcher=alltoall"});
  ASSERT_EQ(r.ranks.size(), 16u);
  // Each all-to-all: a GPU's 4096 tokens x 8 rows, each on the other node with probability 8/16,
  // BF16 (2 x 7168 bytes), over its 1 GB/s NIC; the NVLink part (7/16 of the rows at 5 GB/s)
  // ends first. Four per layer (dispatch, combine, and their gradients), four layers; one
  // microbatch leaves nothing to hide them behind.
  const double ib_s = 4096 * 8 * (8.0 / 16) * 2 * 7168 / 1e9;
  for (const RankResult& rr : r.ranks)
    EXPECT_NEAR(rr.exposed_s[ops::CommClass::Ep], 16 * ib_s, 1e-3 * 16 * ib_s) << "gpu " << rr.rank;
  expect_exact_split(r);
}

TEST(MoeDispatchStep, TheAllToAllOverlapPairsEachBackwardWithTheNextForward) {
  const std::vector<std::string> base = {"parallel.moe_dispatcher=alltoall", "train.global_batch=64",
                                         "parallel.microbatches=4"};
  std::vector<std::string> with = base;
  with.push_back("parallel.moe_overlap_ep_comm=true");
  const SimResult off = slow_ep16_moe_run(base), on = slow_ep16_moe_run(with);
  // F&B ops name their backward partner: microbatch b pairs with forward b + 1 (1F1B on one stage:
  // F0, then F1&B0, F2&B1, F3&B2, then B3).
  int paired = 0;
  for (const Span& s : on.spans)
    if (s.rank == 0 && s.stream == ops::kComputeStream && s.tag.microbatch2 != ops::kNoIndex && s.tag.phase == ops::Phase::Forward) {
      EXPECT_EQ(s.tag.microbatch, s.tag.microbatch2 + 1);
      ++paired;
    }
  EXPECT_GT(paired, 0);
  for (size_t i = 0; i < on.ranks.size(); ++i) {
    EXPECT_NEAR(on.ranks[i].compute_s, off.ranks[i].compute_s, 1e-9 * off.ranks[i].compute_s);  // same work
    // Three of the four microbatch pairs hide one side's transfers behind the other's compute.
    EXPECT_LT(on.ranks[i].exposed_s[ops::CommClass::Ep], off.ranks[i].exposed_s[ops::CommClass::Ep]);
  }
  EXPECT_LT(on.step_time_s, off.step_time_s);
  expect_exact_split(on);
}

TEST(MoeDispatchStep, ExpertTensorParallelismGathersAndScattersEachLayersRows) {
  // EP 8 with expert TP 2: 16 GPUs, each EP group 8 GPUs 2 apart; every layer's forward gathers the
  // dispatched rows over the expert-TP pair and reduce-scatters the outputs, the backward too.
  const SimResult r = slow_ep16_moe_run({"parallel.moe_dispatcher=alltoall", "parallel.ep=8", "parallel.expert_tp=2"});
  int gathers = 0, scatters = 0;
  for (const Span& s : r.spans) {
    if (s.rank != 0) continue;
    gathers += s.tag.kind == ops::OpKind::EtpAllGather;
    scatters += s.tag.kind == ops::OpKind::EtpReduceScatter;
  }
  EXPECT_EQ(gathers, 4 * 2);   // 4 layers: forward dispatch, backward combine-gradient
  EXPECT_EQ(scatters, 4 * 2);  // forward combine, backward dispatch-gradient
  expect_exact_split(r);
}

TEST(MoeDispatchStep, EachHostSyncOfTheDispatcherIdlesTheGpuForOneHostLaunch) {
  // software.host_syncs_per_moe_layer: the forward dispatch of each MoE layer waits for the host,
  // which drained the GPU's queue and issues the all-to-all host_launch_s later. 4 layers, one
  // microbatch, 2 syncs of 1 ms each: 8 ms more exposed EP time on every GPU and 8 ms more step;
  // the compute itself (the host-bound launch model at the same host_launch_s) does not move.
  const std::vector<std::string> base = {"parallel.moe_dispatcher=alltoall", "sim.compute=predicted",
                                         "software.host_launch_s=1e-3"};
  std::vector<std::string> two = base, none = base;
  two.push_back("software.host_syncs_per_moe_layer=2");
  none.push_back("software.host_syncs_per_moe_layer=0");
  const SimResult r2 = slow_ep16_moe_run(two), r0 = slow_ep16_moe_run(none);
  const double expected_s = 4 * 2 * 1e-3;
  ASSERT_EQ(r2.ranks.size(), r0.ranks.size());
  for (size_t i = 0; i < r2.ranks.size(); ++i) {
    EXPECT_NEAR(r2.ranks[i].compute_s, r0.ranks[i].compute_s, 1e-9 * r0.ranks[i].compute_s);
    EXPECT_NEAR(r2.ranks[i].exposed_s[ops::CommClass::Ep] - r0.ranks[i].exposed_s[ops::CommClass::Ep], expected_s,
                1e-6) << "gpu " << i;
  }
  EXPECT_NEAR(r2.step_time_s - r0.step_time_s, expected_s, 1e-6);
  // Speed of light charges no software overhead: the syncs cost nothing there.
  std::vector<std::string> sol = two;
  sol[1] = "sim.compute=speed-of-light";
  std::vector<std::string> sol0 = none;
  sol0[1] = "sim.compute=speed-of-light";
  EXPECT_DOUBLE_EQ(slow_ep16_moe_run(sol).step_time_s, slow_ep16_moe_run(sol0).step_time_s);
  expect_exact_split(r2);
}

}  // namespace
}  // namespace stepsim::test
