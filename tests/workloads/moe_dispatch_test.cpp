// MoE layers as frameworks run them: each token dispatcher's bytes per token against a hand
// formula, grouped against per-expert expert GEMMs against the tile model worked out by hand, and
// the capacity factor's drops and padding.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "simulator/config/config_loader.hpp"
#include "simulator/roofline/roofline.hpp"
#include "workloads/cost/gemm_cost.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_work.hpp"
#include "workloads/routing/expert_loads.hpp"
#include "workloads/traffic/ep_traffic.hpp"
#include "vocabulary/config_error.hpp"
#include "vocabulary/rank_layout.hpp"

namespace stepsim {
namespace {

// DeepSeek-V3's default plan: EP 64 over 8 nodes of 8 GPUs, hidden 7168, 8 experts per token.
Plan deepseek(std::vector<std::string> sets = {}) { return load_plan(default_config_path(), sets); }
// The same plan with another dispatcher (the file's DeepEP half-microbatches switched off with it).
Plan deepseek_with(const std::string& dispatcher, std::vector<std::string> sets = {}) {
  sets.push_back("parallel.moe_dispatcher=" + dispatcher);
  sets.push_back("parallel.split_lone_chunks=false");
  return deepseek(sets);
}

double bytes_over(const std::vector<PeerFlow>& flows, int64_t gpu, bool remote) {
  double s = 0;
  for (const auto& f : flows)
    if ((f.peer / 8 != gpu / 8) == remote) s += f.bytes;
  return s;
}

TEST(MoeDispatch, AllToAllSendsOneBf16CopyPerRoutedExpertOnAnotherGpu) {
  const Plan p = deepseek_with("alltoall");
  // Megatron's alltoall moves BF16 hidden states even in an FP8 plan: 2 x 7168 bytes a copy.
  EXPECT_DOUBLE_EQ(dispatch_bytes_per_token(p), 2.0 * 7168);
  const int64_t gpu = 3 * 8 + 5;
  const double tokens = 4096, copy = 2.0 * 7168;
  const AllToAll a = per_expert_all_to_all(p, gpu, [&](int64_t) { return tokens; }, copy);
  // Each of a token's 8 rows lands on any of the 64 GPUs alike: 8 / 64 copies per peer; 56 peers on
  // the other 7 nodes (IB), 7 on this node (NVLink), none to itself.
  EXPECT_EQ(a.out.size(), 63u);
  EXPECT_NEAR(bytes_over(a.out, gpu, true), tokens * 8 * 56.0 / 64 * copy, 1e-6);
  EXPECT_NEAR(bytes_over(a.out, gpu, false), tokens * 8 * 7.0 / 64 * copy, 1e-6);
  EXPECT_NEAR(bytes_over(a.in, gpu, true), tokens * 8 * 56.0 / 64 * copy, 1e-6);
  // DeepEP sends the same token to 3.5 remote nodes (the seed's figure): half the IB bytes at FP8.
  const Plan deepep = deepseek();
  const AllToAll d = ep_all_to_all(deepep, ep_layout(deepep, uniform_routing(deepep)), gpu,
                                   [&](int64_t) { return tokens; }, dispatch_bytes_per_token(deepep));
  EXPECT_NEAR(bytes_over(d.out, gpu, true), tokens * 3.5 * (7168 + 224), 1e-6);
}

// Megatron's flex dispatcher runs DeepEP (or HybridEP) on BF16 tokens: moe_fp8_dispatch=false
// halves DeepEP's per-copy bytes' precision, not its copies; an alltoall plan cannot ask for FP8.
TEST(MoeDispatch, DeepEpSendsBf16WhenFp8DispatchIsOff) {
  EXPECT_DOUBLE_EQ(dispatch_bytes_per_token(deepseek()), 7168 + 7168 / 128 * 4);
  EXPECT_DOUBLE_EQ(dispatch_bytes_per_token(deepseek({"parallel.moe_fp8_dispatch=false"})), 2.0 * 7168);
  // DeepEP may quantise a BF16 plan's tokens for the wire.
  EXPECT_DOUBLE_EQ(dispatch_bytes_per_token(deepseek({"train.precision=bf16", "parallel.moe_fp8_dispatch=true"})),
                   7168 + 7168 / 128 * 4);
  EXPECT_THROW(deepseek_with("alltoall", {"parallel.moe_fp8_dispatch=true"}), ConfigError);
}

TEST(MoeDispatch, UnevenLoadsSendEachGpuItsShareOfTheRows) {
  const Plan p = deepseek_with("alltoall");
  std::vector<double> share(64, 0.5 / 63);
  share[10] = 0.5;  // the GPU at slot 10 of the group takes half the rows
  const int64_t gpu = 3;
  const AllToAll a = per_expert_all_to_all(p, gpu, [](int64_t) { return 100.0; }, 1.0, share.data());
  for (const PeerFlow& f : a.out) EXPECT_NEAR(f.bytes, 100.0 * 8 * share[size_t(f.peer)], 1e-9) << f.peer;
  for (const PeerFlow& f : a.in) EXPECT_NEAR(f.bytes, 100.0 * 8 * share[size_t(gpu)], 1e-9) << f.peer;
}

TEST(MoeDispatch, AllGatherRingsTheWholeGroupsTokens) {
  const Plan p = deepseek_with("allgather");
  const int64_t gpu = 3 * 8 + 5;
  const double tokens = 4096, copy = 2.0 * 7168;
  const AllToAll a = all_gather_dispatch(p, gpu, [&](int64_t) { return tokens; }, copy);
  // The group's 64 x 4096 tokens, hierarchically: over IB this GPU's eighth, 7/8 of it from the
  // other nodes; over NVLink 7/8 of all of it.
  const double gathered = 64 * tokens * copy;
  EXPECT_NEAR(bytes_over(a.out, gpu, true), gathered / 8 * 7.0 / 8, 1e-3);
  EXPECT_NEAR(bytes_over(a.out, gpu, false), gathered * 7.0 / 8, 1e-3);
}

TEST(MoeDispatch, RooflineCountsEachDispatchersCopies) {
  // EP 64 over 8 nodes: DeepEP 3.5 remote nodes; alltoall 8 x 56 / 64 = 7; allgather (64 - 8) / 8 = 7.
  EXPECT_NEAR(compute_roofline(deepseek()).ep.ib_copies_per_token, 3.5, 1e-12);
  EXPECT_NEAR(compute_roofline(deepseek_with("alltoall")).ep.ib_copies_per_token, 7.0, 1e-12);
  EXPECT_NEAR(compute_roofline(deepseek_with("allgather")).ep.ib_copies_per_token, 7.0, 1e-12);
  // EP 16 over two nodes: 8 x 8 / 16 = 4 copies across IB.
  const Plan ep16 = deepseek_with("alltoall", {"parallel.ep=16"});
  EXPECT_NEAR(compute_roofline(ep16).ep.ib_copies_per_token, 4.0, 1e-12);
}

TEST(MoeDispatch, DefaultIsDeepEpForDeepSeekModelsAndAllToAllOtherwise) {
  EXPECT_EQ(deepseek().parallel.moe_dispatcher, MoeDispatcher::DeepEP);
  const Plan mixtral = load_plan(default_config_path(),
                                 {"model.config_json=" + std::string(STEPSIM_SOURCE_DIR) +
                                      "/workloads/models/mixtral-8x7b.config.json",
                                  "parallel.ep=8", "schedule=1f1b", "parallel.split_lone_chunks=false"});
  EXPECT_EQ(mixtral.parallel.moe_dispatcher, MoeDispatcher::AllToAll);
}

TEST(MoeDispatch, KeysThatCannotApplyAreOneLineErrors) {
  // DeepSeek's half-microbatch overlap needs DeepEP's free compute stream.
  try {
    deepseek({"parallel.moe_dispatcher=alltoall", "parallel.split_lone_chunks=true"});
    FAIL() << "split_lone_chunks with alltoall accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("parallel.split_lone_chunks"), std::string::npos) << what;
    EXPECT_NE(what.find("parallel.moe_dispatcher is alltoall"), std::string::npos) << what;
  }
  EXPECT_THROW(deepseek({"parallel.moe_pad_to_capacity=true"}), ConfigError);  // no capacity set
  EXPECT_THROW(load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                         {"parallel.moe_dispatcher=alltoall"}),
               ConfigError);  // a dense model
  EXPECT_THROW(deepseek({"parallel.moe_dispatcher=nccl"}), ConfigError);
}

TEST(MoeDispatch, AllToAllSortsReceivedRowsByExpertWhenAGpuHoldsSeveral) {
  const auto has = [](const Plan& p, std::string_view name) {
    const LayerWork w = layer_work(p, 5, 1.0, 1000.0);
    for (const MemoryOp& op : w.part(LayerPart::MlpF).memory)
      if (op.name == name) return op.bytes_per_row;
    return 0.0;
  };
  // 256 experts over EP 64: 4 per GPU; a pass each way over each BF16 row, read and written.
  EXPECT_DOUBLE_EQ(has(deepseek_with("alltoall"), "sort_by_expert"),
                   2 * 2 * 2 * 7168.0);
  EXPECT_DOUBLE_EQ(has(deepseek(), "sort_by_expert"), 0.0);  // DeepEP lays rows out per expert
}

// The tile model (docs/cost-model.md) by hand on an H100 (132 SMs, tiles 128 x 256, its
// transpose, or 128 x 128; 122 K elements of fixed cost per tile; BF16 at 0.788 of 989 TFLOP/s):
// 8 experts of 256 rows each, 1536 x 2048 (Qwen3-30B's gate-and-up, one GPU of EP 16).
TEST(MoeExpertGemms, GroupedAndPerExpertFollowTheTileModel) {
  const HardwareConfig hw = load_plan(default_config_path(), {"hardware.preset=h100-sxm"}).hardware;
  const double m = 256, n = 1536, k = 2048, flops = 2 * m * n * k;
  // One expert alone: 128 x 128 tiles give 2 x 12 = 24 tiles, split 5 ways in K (132 / 24) to 120
  // tiles in one wave (120 / 132 full), each 2048 / 5 deep: 0.788 x (120 / 132) x 409.6 / 531.6.
  const double alone = 0.788 * (120.0 / 132) * 409.6 / (409.6 + 122);
  EXPECT_NEAR(cost::gemm_seconds({m, n, k, 1, Precision::BF16}, hw), flops / (989e12 * alone), 1e-3 * flops / (989e12 * alone));
  // Grouped: 8 x 24 = 192 tiles fill 2 waves (192 / 264), no split: 0.788 x (192 / 264) x 2048 / 2170.
  const double grouped = 0.788 * (192.0 / 264) * 2048 / (2048 + 122);
  EXPECT_NEAR(cost::gemm_seconds({m, n, k, 8, Precision::BF16}, hw), 8 * flops / (989e12 * grouped),
              1e-3 * 8 * flops / (989e12 * grouped));
}

TEST(MoeExpertGemms, PerExpertGemmsLaunchOncePerExpert) {
  // 256 experts over EP 64 = 4 per GPU; the routed experts' GEMMs and their activation.
  const auto plan = [](bool grouped) {
    return deepseek_with("alltoall", {std::string("parallel.moe_grouped_gemm=") + (grouped ? "true" : "false")});
  };
  const Plan g = plan(true), s = plan(false);
  const cost::MicrobatchShape shape = cost::mean_microbatch_shape(g);
  ASSERT_DOUBLE_EQ(shape.experts_per_gpu, 4.0);
  const LayerWork w = layer_work(g, 5, g.sequences_per_microbatch(), shape.routed_rows);
  const cost::PartSeconds pg = cost::part_seconds(g, w.part(LayerPart::MlpF), shape);
  const cost::PartSeconds ps = cost::part_seconds(s, w.part(LayerPart::MlpF), shape);
  // Grouped: the up and down GEMMs, the experts' activation and the casts of the two GEMMs' inputs
  // (BF16 tokens: quantised after the dispatch, split per expert) launch once; one by one, 4 times.
  const double launch = g.software.kernel_launch_s;
  EXPECT_NEAR(ps.routed.launch + ps.tokens.launch - pg.routed.launch - pg.tokens.launch, 5 * 3 * launch, 1e-12);
  // Per expert: each GEMM its own call of the tile model at one expert's rows.
  const double rows = shape.routed_rows / 4, n_up = 2 * 2048.0, k_up = 7168;
  const double up = cost::gemm_seconds({rows, n_up, k_up, 1, Precision::FP8}, g.hardware);
  const double down = cost::gemm_seconds({rows, k_up, 2048.0, 1, Precision::FP8}, g.hardware);
  EXPECT_NEAR(ps.routed.gemm, 4 * (up + down), 1e-9 * ps.routed.gemm);
}

// Transformer Engine's grouped GEMM on Hopper is a loop of cuBLAS GEMMs over a few streams
// (software.grouped_gemm_per_expert): its tiles still share the SMs' waves, so the GEMM time is the
// grouped one, but each of the 4 local experts' up and down GEMMs is a launch of its own; the
// activation over the permuted rows stays one kernel.
TEST(MoeExpertGemms, AGroupedGemmRunAsALoopLaunchesPerExpertAtTheGroupedTime) {
  const Plan one = deepseek_with("alltoall", {"parallel.moe_grouped_gemm=true"});
  const Plan loop = deepseek_with("alltoall", {"parallel.moe_grouped_gemm=true", "software.grouped_gemm_per_expert=true"});
  const cost::MicrobatchShape shape = cost::mean_microbatch_shape(one);
  ASSERT_DOUBLE_EQ(shape.experts_per_gpu, 4.0);
  const LayerWork w = layer_work(one, 5, one.sequences_per_microbatch(), shape.routed_rows);
  const cost::PartSeconds p1 = cost::part_seconds(one, w.part(LayerPart::MlpF), shape);
  const cost::PartSeconds pl = cost::part_seconds(loop, w.part(LayerPart::MlpF), shape);
  EXPECT_DOUBLE_EQ(pl.routed.gemm, p1.routed.gemm);
  EXPECT_DOUBLE_EQ(pl.routed.kernels - p1.routed.kernels, 2 * (4 - 1));
  EXPECT_NEAR(pl.routed.launch - p1.routed.launch, 2 * (4 - 1) * one.software.kernel_launch_s, 1e-15);
  // The profiles of Megatron-Core's releases run it so; DeepSeek's own (DeepGEMM) does not.
  EXPECT_FALSE(one.software.grouped_gemm_per_expert);
  for (const char* profile : {"megatron-core-r0.8", "nemo-24", "nemo-25", "megatron-bridge"})
    EXPECT_TRUE(load_plan(default_config_path(), {std::string("software.profile=") + profile}).software.grouped_gemm_per_expert)
        << profile;
}

TEST(MoeCapacity, PaddingRunsEveryExpertAtCapacityAndDroppingCapsTheHottest) {
  // Balanced loads: padded to 1.25 x the mean, every GPU runs 1.25 x its rows; a factor below 1
  // drops the excess of every expert.
  EXPECT_DOUBLE_EQ(balanced_kept_rows(deepseek({"parallel.moe_capacity_factor=1.25", "parallel.moe_pad_to_capacity=true"})), 1.25);
  EXPECT_DOUBLE_EQ(balanced_kept_rows(deepseek({"parallel.moe_capacity_factor=1.25"})), 1.0);
  EXPECT_DOUBLE_EQ(balanced_kept_rows(deepseek({"parallel.moe_capacity_factor=0.5"})), 0.5);
  // Hot routing: one expert takes half the rows; capacity 2 keeps at most 2 / 256 of them.
  const Plan hot = deepseek({"scenario.routing=hot", "scenario.hot_experts=1", "scenario.hot_share=0.5",
                             "parallel.moe_capacity_factor=2"});
  const ExpertLoads loads(hot);
  double most = 0;
  for (int64_t e = 0; e < loads.experts(); ++e) most = std::max(most, loads.expert_share(3, 0, e));
  EXPECT_NEAR(most, 2.0 / 256, 1e-12);
}

}  // namespace
}  // namespace stepsim
