// The roofline reads the fabric: on a fat tree the EP, DP and pipeline terms use the NIC's share
// of its leaf's uplinks, ib / oversubscription, for the bytes that climb to the spines (closed
// forms derived here from the default plan's layout: EP groups of 8 nodes, stages 256 GPUs apart).
#include <cmath>
#include <gtest/gtest.h>

#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"
#include "tests/roofline/roofline_of.hpp"

namespace stepsim {
namespace {

using test::kRel;
using test::roof;

TEST(TopologyRoofline, OneToOneFatTreeIsTheStar) {
  const auto star = roof(), tree = roof({"cluster.topology=fat-tree"});
  EXPECT_NEAR(tree.step_time_s, star.step_time_s, kRel);
  EXPECT_NEAR(tree.ep_comm_s, star.ep_comm_s, kRel);
  EXPECT_NEAR(tree.dp_comm_s, star.dp_comm_s, kRel);
}

TEST(TopologyRoofline, EveryRemoteNodeUnderAnotherLeafDoublesTheAllToAllAtTwoToOne) {
  // One node per leaf: all of GPU 0's IB bytes climb, at 25 GB/s instead of 50.
  const auto star = roof(), tree = roof({"cluster.topology=fat-tree", "cluster.leaf_nics=8", "cluster.oversubscription=2"});
  EXPECT_NEAR(tree.ep.spine_bytes_per_gpu, star.ep.ib_bytes_per_gpu, 1e-6 * star.ep.ib_bytes_per_gpu);
  EXPECT_NEAR(tree.ep_comm_s, 2 * star.ep_comm_s, kRel);
  // Stages 256 GPUs apart and DP rings across nodes all climb too.
  EXPECT_NEAR(tree.pp_comm_s, 2 * star.pp_comm_s, kRel);
  EXPECT_NEAR(tree.dp_comm_s, 2 * star.dp_comm_s, kRel);
  EXPECT_DOUBLE_EQ(tree.dp.ring_GBps, 25);
}

TEST(TopologyRoofline, FourNodesPerLeafSendFourOfSevenRemoteShares) {
  // Leaves of 32 NICs hold 4 nodes: of node 0's 7 EP peers, nodes 4..7 are under the other leaf.
  // EP time = max(B / 50, (4/7) B / 25) = (8/7) B / 50.
  const auto star = roof(), tree = roof({"cluster.topology=fat-tree", "cluster.oversubscription=2"});
  EXPECT_NEAR(tree.ep.spine_bytes_per_gpu, 4.0 / 7.0 * star.ep.ib_bytes_per_gpu, 1e-6 * star.ep.ib_bytes_per_gpu);
  EXPECT_NEAR(tree.ep_comm_s, 8.0 / 7.0 * star.ep_comm_s, kRel);
}

TEST(TopologyRoofline, RailOptimisedLeavesKeepTheDefaultPlanUnderOneLeafPerStage) {
  // Rail leaves span 32 nodes = one stage's 256 GPUs: EP groups and DP rings stay under their
  // leaf; only the pipeline sends (32 nodes apart) climb.
  const auto star = roof(),
             rail = roof({"cluster.topology=fat-tree", "cluster.rail_optimized=true", "cluster.oversubscription=2"});
  EXPECT_NEAR(rail.ep_comm_s, star.ep_comm_s, kRel);
  EXPECT_NEAR(rail.dp_comm_s, star.dp_comm_s, kRel);
  EXPECT_NEAR(rail.pp_comm_s, 2 * star.pp_comm_s, kRel);
}

TEST(TopologyRoofline, EpInsideAnNvl72RackMovesNoInfiniBandBytes) {
  const auto r = roof({"cluster.nvlink_domain=72"});
  EXPECT_EQ(r.ep.ib_bytes_per_gpu, 0.0);
  // Every expert copy now crosses NVLink inside the 64 GPUs of the group: k (63/64) copies.
  const auto star = roof();
  const double per_token = star.ep.dispatch_bytes_per_copy + star.ep.combine_bytes_per_copy;
  // The all-to-all is NVLink-only: each of the 63 other GPUs gets a token's copy with probability
  // 1 - (63/64)^8, forward and backward, at the H800's 160 GB/s.
  const double touch = 1.0 - std::pow(63.0 / 64.0, 8.0);
  EXPECT_NEAR(r.ep_comm_s, 2.0 * star.ep.tokens_per_gpu * touch * 63.0 * per_token / 160e9, 1e-9 * r.ep_comm_s);
  EXPECT_NEAR(r.ep.nvlink_bytes_per_gpu, 2.0 * star.ep.tokens_per_gpu * 8 * 63.0 / 64.0 * per_token,
              1e-6 * r.ep.nvlink_bytes_per_gpu);
}

}  // namespace
}  // namespace stepsim
