// The rank layout: coordinates and groups worked out by hand from Megatron's order
// (gpu = pp * stage_gpus + (dp * cp + cp_rank) * tp + tp_rank; experts: ep consecutive GPUs).
#include <gtest/gtest.h>

#include "vocabulary/rank_layout.hpp"

namespace stepsim {
namespace {

using Ids = std::vector<int64_t>;

Plan small_plan() {
  Plan p;
  p.cluster.nodes = 2;
  p.cluster.gpus_per_node = 8;
  p.parallel.pp = 2;
  p.parallel.tp = 2;
  p.parallel.cp = 2;
  p.parallel.ep = 4;
  return p;
}

TEST(RankLayout, CoordinatesOfOneGpu) {
  const RankLayout l(small_plan());
  EXPECT_EQ(l.stage_gpus(), 8);
  EXPECT_EQ(l.dp(), 2);
  EXPECT_EQ(l.expert_dp(), 2);
  // GPU 13: stage 1 (GPUs 8..15), 5th of it: tp 5 % 2 = 1, cp (5 / 2) % 2 = 0, dp 5 / 4 = 1.
  const RankCoords c = l.coords(13);
  EXPECT_EQ(c.pp, 1);
  EXPECT_EQ(c.tp, 1);
  EXPECT_EQ(c.cp, 0);
  EXPECT_EQ(c.dp, 1);
  EXPECT_EQ(c.ep, 1);
  EXPECT_EQ(c.expert_dp, 1);
  EXPECT_EQ(l.gpu(1, 1, 0, 1), 13);
  EXPECT_EQ(l.on_pipeline_rank(13, 0), 5);
}

// The shares and group facts the workloads, memory and reports ask instead of reading the plan's
// sizes: TP 2 x CP 2 split a replica's tokens four ways; 2 replicas x 2 CP ranks hold the same
// non-expert weights (the grad group); EP groups of 4 start at multiples of 4.
TEST(RankLayout, SharesAndGroupFacts) {
  const RankLayout l(small_plan());
  EXPECT_EQ(l.token_split(), 4);
  EXPECT_DOUBLE_EQ(l.token_share(), 0.25);
  EXPECT_EQ(l.grad_group_size(), 4);
  EXPECT_EQ(l.grad_group_size(), int64_t(l.grad_group(13).size()));
  EXPECT_EQ(l.first_of_ep_group(13), 12);
  EXPECT_EQ(l.first_of_ep_group(13), l.ep_group(13).front());
}

TEST(RankLayout, GroupsAreRankLists) {
  const RankLayout l(small_plan());
  EXPECT_EQ(l.tp_group(13), (Ids{12, 13}));
  EXPECT_EQ(l.cp_group(13), (Ids{13, 15}));
  EXPECT_EQ(l.dp_group(13), (Ids{9, 13}));
  EXPECT_EQ(l.grad_group(13), (Ids{9, 11, 13, 15}));
  EXPECT_EQ(l.pp_group(13), (Ids{5, 13}));
  EXPECT_EQ(l.ep_group(13), (Ids{12, 13, 14, 15}));
  EXPECT_EQ(l.expert_dp_group(13), (Ids{9, 13}));
}

TEST(RankLayout, WithoutTensorOrContextParallelAStageIsItsReplicas) {
  // The default DeepSeek-V3 plan: 2048 GPUs, PP 8, EP 64: replica d of rank r is GPU 256 r + d.
  Plan p;
  p.cluster.nodes = 256;
  p.cluster.gpus_per_node = 8;
  p.parallel.pp = 8;
  p.parallel.ep = 64;
  const RankLayout l(p);
  EXPECT_EQ(l.dp(), 256);
  EXPECT_EQ(l.pipeline_rank(3 * 256 + 77), 3);
  EXPECT_EQ(l.dp_rank(3 * 256 + 77), 77);
  EXPECT_EQ(l.ep_group_index(3 * 256 + 77), 1);
  EXPECT_EQ(l.ep_slot(3 * 256 + 77), 13);
  EXPECT_EQ(l.expert_dp_group(77), (Ids{13, 77, 141, 205}));
  EXPECT_EQ(l.dp_group(77).size(), 256u);
}

}  // namespace
}  // namespace stepsim
