// The bytes the replay puts on links, checked against the seed's per-GPU accounting by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"
#include "workloads/memory/state_bytes.hpp"
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

// parallel.fp8_param_gather on Llama 3.1 8B (32 layers, hidden 4096, 32 query and 8 KV heads of
// 128, MLP 14336, vocabulary 128256, untied), FP8 with per-tensor scaling, TP 1. By hand, per layer:
// the FP8 GEMMs' weights Q = q 4096^2 + k, v 4096 x 1024 each + o 4096^2 + gate, up, down 3 x 4096 x
// 14336 = 41,943,040 + 176,160,768 = 218,103,808; two RMSNorm weights, 8192, stay BF16. Gathered:
// 1 byte per quantised weight and 2 per other parameter.
TEST(DpCollectives, Fp8ParameterGatherMovesTheGemmWeightsInFp8) {
  const std::string llama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";
  const std::vector<std::string> fp8 = {"train.precision=fp8", "train.fp8_recipe=tensorwise"};
  std::vector<std::string> on = fp8;
  on.push_back("parallel.fp8_param_gather=true");
  const Plan p = load_plan(llama, on);
  const ModelParams params = count_params(p.model);
  const double q = 218103808, norms = 8192;
  const HeldParams quantised = layer_quantised_params(p, params, 5);
  EXPECT_DOUBLE_EQ(quantised.non_expert, q);
  EXPECT_DOUBLE_EQ(quantised.expert, 0);
  const HeldParams bytes = gathered_bytes(p, layer_held_params(p, params, 5), quantised);
  EXPECT_DOUBLE_EQ(bytes.non_expert, q * 1 + norms * 2);
  // MXFP8 weights travel in BF16 (Megatron-Core gathers them into the gradient buffer), NVFP4 packed
  // with an E4M3 scale per 16 values: 0.5625 bytes.
  EXPECT_DOUBLE_EQ(load_plan(llama, {"hardware.preset=b200", "train.precision=mxfp8", "parallel.fp8_param_gather=true"}).gathered_weight_bytes(), 2);
  EXPECT_DOUBLE_EQ(load_plan(llama, {"hardware.preset=b200", "train.precision=nvfp4", "parallel.fp8_param_gather=true"}).gathered_weight_bytes(), 0.5625);
  // The roofline's ZeRO all-gather over the 16 data-parallel replicas: the whole model's bytes, the
  // embedding and the head (128256 x 4096 each) and the final norm (4096) in BF16.
  const double rest = 32 * norms + 2 * 128256.0 * 4096 + 4096, all = 32 * q;
  const double ratio = compute_roofline(p).dp.allgather_ib_bytes / compute_roofline(load_plan(llama, fp8)).dp.allgather_ib_bytes;
  EXPECT_NEAR(ratio, (all + 2 * rest) / (2 * (all + rest)), 1e-12);
  // A bucket that cuts an item takes its share of the item's gathered bytes: 10 parameters of 15
  // bytes in buckets of 4 are 6, 6 and 3 bytes.
  const DpBuckets cut = dp_buckets({{10.0, 0.0}}, 4, {{15.0, 0.0}});
  ASSERT_EQ(cut.buckets.size(), 3u);
  EXPECT_DOUBLE_EQ(cut.buckets[0].gathered_non_expert_bytes, 6);
  EXPECT_DOUBLE_EQ(cut.buckets[2].gathered_non_expert_bytes, 3);
  EXPECT_DOUBLE_EQ(dp_buckets({{10.0, 1.0}}, 100).buckets[0].gathered_expert_bytes, 2);  // BF16 when not given
}

}  // namespace
}  // namespace stepsim
