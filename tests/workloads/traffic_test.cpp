// The bytes the replay puts on links, checked against the seed's per-GPU accounting by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "simulator/config/config_loader.hpp"
#include "workloads/traffic/dp_collectives.hpp"
#include "platforms/cluster_platform.hpp"
#include "workloads/traffic/ep_traffic.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {
namespace {

Plan plan(std::vector<std::string> sets = {}) { return load_plan(default_config_path(), sets); }

double sum(const std::vector<PeerFlow>& flows, const Plan& p, int64_t gpu, bool remote) {
  double s = 0;
  for (const auto& f : flows)
    if ((f.peer / p.cluster.gpus_per_node != gpu / p.cluster.gpus_per_node) == remote) s += f.bytes;
  return s;
}

TEST(EpTraffic, DispatchSendsEachTokenToThreeAndAHalfRemoteNodes) {
  const Plan p = plan();
  const auto layout = ep_layout(p, uniform_routing(p));
  const int64_t gpu = 3 * 8 + 5;  // node 3, local rank 5
  const auto a = ep_all_to_all(p, layout, gpu, [](int64_t) { return 4096.0; }, dispatch_bytes_per_token(p));
  // Seed: 3.5 remote copies per token of 7168 FP8 bytes + 56 FP32 scales, over IB, to the same
  // local rank on the other 7 nodes of the EP group (nodes 0..7).
  EXPECT_NEAR(sum(a.out, p, gpu, true), 4096 * 3.5 * (7168 + 224), 1e-6);
  int ib_peers = 0;
  for (const auto& f : a.out)
    if (f.peer / 8 != 3) {
      ++ib_peers;
      EXPECT_EQ(f.peer % 8, 5);
      EXPECT_LT(f.peer / 8, 8);
    }
  EXPECT_EQ(ib_peers, 7);
  // NVLink: the 8 x 4096 x 0.5 copies reaching this rail go on to the local GPUs hosting their
  // experts: 2 experts per touched node over 8 GPUs, 1 - (7/8)^2 of a GPU each.
  const double per_local = 8 * 4096 * 0.5 * (1 - std::pow(7.0 / 8, 2)) * (7168 + 224);
  EXPECT_NEAR(sum(a.out, p, gpu, false), 7 * per_local, 1e-6 * per_local);
}

TEST(EpTraffic, RingEquivalentKeepsEveryPortsBytes) {
  const Plan p = plan();
  const auto layout = ep_layout(p, uniform_routing(p));
  const int64_t gpu = 12;
  const auto a = ep_all_to_all(p, layout, gpu, [](int64_t) { return 4096.0; }, combine_bytes_per_token(p.model));
  const auto r = ring_equivalent(p, a, gpu);
  ASSERT_EQ(r.out.size(), 2u);
  ASSERT_EQ(r.in.size(), 2u);
  EXPECT_NEAR(sum(r.out, p, gpu, true), sum(a.out, p, gpu, true), 1e-6);
  EXPECT_NEAR(sum(r.out, p, gpu, false), sum(a.out, p, gpu, false), 1e-6);
  EXPECT_NEAR(sum(r.in, p, gpu, true), sum(a.in, p, gpu, true), 1e-6);
  // The IB flow goes to the same local rank on the next node of the group, the NVLink one to the
  // next GPU of the node.
  for (const auto& f : r.out) {
    if (f.peer / 8 != gpu / 8) EXPECT_EQ(f.peer, (gpu / 8 + 1) * 8 + gpu % 8);
    else EXPECT_EQ(f.peer, gpu + 1);
  }
}

TEST(EpTraffic, FastFidelityDropsTheNvlinkLegOnlyWhenItsIbLegTakesLonger) {
  const Plan p = plan();
  const auto layout = ep_layout(p, uniform_routing(p));
  const int64_t gpu = 12;
  const auto ring = ring_equivalent(
      p, ep_all_to_all(p, layout, gpu, [](int64_t) { return 4096.0; }, dispatch_bytes_per_token(p)), gpu);
  // Per token: 3.5 copies over IB (EpTraffic.DispatchSends...) against 7 x 8 x 0.5 x (1 - (7/8)^2)
  // = 6.5625 over NVLink. With no latency, the NVLink leg ends first while its bandwidth exceeds
  // 50 GB/s x 6.5625 / 3.5 = 93.75 GB/s.
  PlatformSpec spec = platform_spec(p);
  spec.ib_latency_s = spec.nvlink_latency_s = 0;
  spec.ib_Bps = 50e9;
  spec.nvlink_Bps = 94e9;
  const auto fast = without_hidden_nvlink(spec, ring, gpu);
  ASSERT_EQ(fast.out.size(), 1u);
  ASSERT_EQ(fast.in.size(), 1u);
  EXPECT_EQ(fast.out[0].peer, (gpu / 8 + 1) * 8 + gpu % 8);  // the IB flow stays as it was
  EXPECT_NEAR(fast.out[0].bytes, 4096 * 3.5 * (7168 + 224), 1e-6);
  spec.nvlink_Bps = 93e9;
  EXPECT_EQ(without_hidden_nvlink(spec, ring, gpu).out.size(), 2u);
  // A latency the IB leg does not pay tips it the other way.
  spec.nvlink_Bps = 94e9;
  spec.nvlink_latency_s = 1.0;
  EXPECT_EQ(without_hidden_nvlink(spec, ring, gpu).out.size(), 2u);
}

TEST(EpTraffic, ExpertGroupInsideANodeUsesOnlyNvlink) {
  const Plan p = plan({"parallel.ep=8"});
  const auto layout = ep_layout(p, uniform_routing(p));
  const auto a = ep_all_to_all(p, layout, 2, [](int64_t) { return 4096.0; }, 1.0);
  EXPECT_EQ(a.out.size(), 7u);
  EXPECT_DOUBLE_EQ(sum(a.out, p, 2, true), 0.0);
  // 8 experts per token among 8 GPUs: a given peer hosts at least one with 1 - (7/8)^8.
  for (const auto& f : a.out) EXPECT_NEAR(f.bytes, 4096 * (1 - std::pow(7.0 / 8, 8)), 1e-6);
}

TEST(DpCollectives, HierarchicalRingMatchesTheSeedsIbAccounting) {
  const Plan p = plan();
  // Stage 0 of the default plan: 256 GPUs on 32 nodes; experts replicated EDP = 4 times.
  const double non_expert = 1e9, expert = 2e8;
  const RankLayout l(p);
  const auto group = [&](int64_t gpu) { return DpGroup{l.grad_group(gpu), l.expert_dp_group(gpu)}; };
  const auto r = dp_ring_flows(p, group(9), 9, non_expert, expert, 2.0);
  ASSERT_EQ(r.out.size(), 3u);
  // IB ring on the 1/8 slice over 32 nodes, NVLink ring in the node, expert ring over 4 replicas.
  EXPECT_EQ(r.out[0].peer, 17);  // next node, same local rank
  EXPECT_NEAR(r.out[0].bytes, non_expert / 8 * (1 - 1.0 / 32) * 2, 1e-3);
  EXPECT_EQ(r.out[1].peer, 10);  // next local GPU
  EXPECT_NEAR(r.out[1].bytes, non_expert * (1 - 1.0 / 8) * 2, 1e-3);
  EXPECT_EQ(r.out[2].peer, 9 + 64);  // the replica in the next EP group
  EXPECT_NEAR(r.out[2].bytes, expert * (1 - 1.0 / 4) * 2, 1e-3);
  EXPECT_EQ(r.in[0].peer, 1);  // previous node, same local rank
  EXPECT_EQ(dp_ring_flows(p, group(1), 1, non_expert, expert, 2.0).in[0].peer, 256 - 8 + 1);  // wraps
}

TEST(DpCollectives, TensorParallelSpreadsTheGroupOneMemberPerNode) {
  // 64 nodes of 8, TP 8, PP 2, dense: a stage is 32 nodes, each node one TP group, so the 32
  // data-parallel peers of GPU 3 are the GPUs with local rank 3 on nodes 0..31: IB ring only.
  Plan p = load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                     {"cluster.nodes=64", "parallel.pp=2", "parallel.microbatches=4", "train.global_batch=1024"});
  p.parallel.tp = 8;
  const RankLayout l(p);
  const auto r = dp_ring_flows(p, DpGroup{l.grad_group(3), l.expert_dp_group(3)}, 3, 1e9, 0.0, 4.0);
  ASSERT_EQ(r.out.size(), 1u);
  EXPECT_EQ(r.out[0].peer, 8 + 3);
  EXPECT_EQ(r.in[0].peer, 31 * 8 + 3);
  EXPECT_NEAR(r.out[0].bytes, 1e9 * (1 - 1.0 / 32) * 4, 1e-3);
}

}  // namespace
}  // namespace stepsim
