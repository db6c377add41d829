// The rank layout: coordinates and groups worked out by hand from Megatron's order
// (gpu = pp * stage_gpus + (dp * cp + cp_rank) * tp + tp_rank; experts: ep consecutive GPUs).
#include <gtest/gtest.h>

#include <set>

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

namespace stepsim {
namespace {

// Megatron-Core's expert grid (v0.10 on, "MoE parallel folding"): gpu % stage_gpus =
// (edp * ep + ep_rank) * etp + etp_rank. The nodes an EP group spans, by hand, for three plans of
// published runs (PUBLISHED-RUNS.md), 8 GPUs per node.
std::set<int64_t> nodes_of(const Ids& group) {
  std::set<int64_t> nodes;
  for (const int64_t gpu : group) nodes.insert(gpu / 8);
  return nodes;
}

Plan grok_plan(int64_t expert_tp) {
  Plan p;  // Grok-1 on 512 H100: TP 4, PP 8, CP 2, EP 8 (GK-H-037 with expert TP 1; D1's recipe left it at TP)
  p.cluster.nodes = 64;
  p.cluster.gpus_per_node = 8;
  p.parallel.pp = 8;
  p.parallel.tp = 4;
  p.parallel.cp = 2;
  p.parallel.ep = 8;
  p.parallel.expert_tp = expert_tp;
  return p;
}

TEST(RankLayout, EpGroupsSpanTheNodesMegatronsOrderGives) {
  // Qwen3-30B on 16 H100 (QW-H-001): TP 1, PP 1, EP 16: GPUs 0..15, both nodes.
  Plan qwen;
  qwen.cluster.nodes = 2;
  qwen.cluster.gpus_per_node = 8;
  qwen.parallel.ep = 16;
  EXPECT_EQ(nodes_of(RankLayout(qwen).ep_group(5)), (std::set<int64_t>{0, 1}));
  // Grok-1, expert TP 1: an EP group is 8 consecutive GPUs, one node; its expert-DP copies 8 apart.
  const RankLayout etp1(grok_plan(1));
  EXPECT_EQ(etp1.ep_group(13), (Ids{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(nodes_of(etp1.ep_group(13)).size(), 1u);
  EXPECT_EQ(etp1.expert_dp_group(13).size(), 8u);  // 64 GPUs a stage / 8
  // Grok-1, expert TP 4: expert-TP groups are 4 consecutive GPUs; an EP group 8 GPUs 4 apart, over
  // 32 GPUs: 4 nodes; the copies of an expert shard 32 apart (2 per stage).
  const RankLayout etp4(grok_plan(4));
  EXPECT_EQ(etp4.etp_group(13), (Ids{12, 13, 14, 15}));
  EXPECT_EQ(etp4.ep_group(13), (Ids{1, 5, 9, 13, 17, 21, 25, 29}));
  EXPECT_EQ(nodes_of(etp4.ep_group(13)), (std::set<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(etp4.expert_dp_group(13), (Ids{13, 45}));
  EXPECT_EQ(etp4.ep_slot(13), 3);
  EXPECT_EQ(etp4.first_of_ep_group(13), 1);
  // Pipeline rank 1 starts at GPU 64: the same pattern shifted.
  EXPECT_EQ(etp4.ep_group(64 + 13).front(), 65);
  EXPECT_EQ(etp4.ep_groups(), 8);      // 64 GPUs of a stage / EP 8
  EXPECT_EQ(etp4.expert_dp(), 2);      // 64 / (8 x 4)
  // Every GPU of a stage is in exactly one EP group, and its group index names it.
  std::set<int64_t> seen;
  for (int64_t gpu = 0; gpu < 64; ++gpu) seen.insert(etp4.ep_group_index(gpu) * 1000 + etp4.first_of_ep_group(gpu));
  EXPECT_EQ(seen.size(), 8u);
}

}  // namespace
}  // namespace stepsim
