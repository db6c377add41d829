// Scoped per-layer CUDA graphs (software.cuda_graph_scope, Megatron-Core's --cuda-graph-scope): the
// kernels a scope holds cost the host nothing, the graph's replay costs one launch, the rest of the
// layer is launched eagerly. Checked against closed forms with a host so slow (10 ms a kernel, the
// largest software.host_launch_s accepted) that every part is host-bound: its time is then exactly
// (eager kernels + one replay) x the host's cost per kernel, less nothing the GPU could hide.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_work.hpp"
#include "vocabulary/config_error.hpp"

namespace stepsim {
namespace {

constexpr double kHost = 0.01;

// DeepSeek-V3's plan with Megatron's alltoall dispatcher (its 17 host-issued launches per MoE layer
// forward, as the megatron-bridge profile counts them), no GPU-side launch cost, no framework time
// beside the kernels, and the given graphs.
Plan plan(const std::string& graphs, const std::string& scope = "") {
  std::vector<std::string> sets = {"parallel.moe_dispatcher=alltoall", "parallel.split_lone_chunks=false",
                                   "software.kernel_launch_s=0", "software.host_launch_s=0.01",
                                   "software.looped_launch_s=0.01", "software.moe_layer_host_s=0",
                                   "software.alltoall_dispatch_launches=17", "software.cuda_graphs=" + graphs};
  if (!scope.empty()) sets.push_back("software.cuda_graph_scope=" + scope);
  return load_plan(default_config_path(), sets);
}

// The host time a part of MoE layer 5 exposes beyond its GPU time, and that GPU time.
struct Exposed {
  double host_s, gpu_s;
};
Exposed exposed(const Plan& p, LayerPart part) {
  const cost::MicrobatchShape shape = cost::mean_microbatch_shape(p);
  const LayerWork w = layer_work(p, 5, p.sequences_per_microbatch(), shape.routed_rows);
  const cost::ClassSeconds s = cost::part_seconds(p, w.part(part), shape).all();
  return {s.launch, s.gemm + s.attention + s.memory};
}

TEST(GraphScope, ThePreprocessScopeTakesTheDispatchersCountKernelsOffTheHost) {
  const Exposed eager = exposed(plan("none"), LayerPart::MlpF);
  const Exposed scoped = exposed(plan("layers", "[moe_preprocess]"), LayerPart::MlpF);
  ASSERT_GT(eager.host_s, 0.2);  // host-bound: tens of launches of 10 ms against milliseconds of work
  EXPECT_DOUBLE_EQ(scoped.gpu_s, eager.gpu_s);
  // 17 launches leave the host, the graph's replay is one.
  EXPECT_NEAR(eager.host_s - scoped.host_s, (17 - 1) * kHost, 1e-9);
}

TEST(GraphScope, TheRouterScopeTakesTheRoutersKernelsOffTheHostInEachPass) {
  // The router: forward its GEMM and the top-k's 2 kernels; input gradient its GEMM and the scores'
  // backward; weight gradient its GEMM. Megatron's scope runs from the MLP's start, so the pre-MLP
  // norm is in it too: 1 fused kernel forward, 2 backward. Each scoped part replays one graph.
  const Plan none = plan("none"), router = plan("layers", "[moe_router]");
  EXPECT_NEAR(exposed(none, LayerPart::AttnF).host_s - exposed(router, LayerPart::AttnF).host_s, (3 - 1) * kHost, 1e-9);
  EXPECT_NEAR(exposed(none, LayerPart::AttnB).host_s - exposed(router, LayerPart::AttnB).host_s, (2 - 1) * kHost, 1e-9);
  EXPECT_NEAR(exposed(none, LayerPart::AttnW).host_s - exposed(router, LayerPart::AttnW).host_s, 0.0, 1e-9);
  EXPECT_NEAR(exposed(none, LayerPart::MlpF).host_s - exposed(router, LayerPart::MlpF).host_s, (1 - 1) * kHost, 1e-9);
  EXPECT_NEAR(exposed(none, LayerPart::MlpB).host_s - exposed(router, LayerPart::MlpB).host_s, (2 - 1) * kHost, 1e-9);
  // The experts stay eager: the weight gradients' part is untouched.
  EXPECT_DOUBLE_EQ(exposed(router, LayerPart::MlpW).host_s, exposed(none, LayerPart::MlpW).host_s);
}

TEST(GraphScope, TheAttentionScopeLeavesOnlyTheRouterAndTheReplayOnTheHost) {
  const Exposed attn = exposed(plan("layers", "[attn]"), LayerPart::AttnF);
  // The router's 3 forward kernels and one replay, less the whole part's GPU time that hides them.
  EXPECT_NEAR(attn.host_s, std::max(0.0, (3 + 1) * kHost - attn.gpu_s), 1e-9);
  const Exposed both = exposed(plan("layers", "[attn, moe_router]"), LayerPart::AttnF);
  EXPECT_NEAR(both.host_s, std::max(0.0, kHost - both.gpu_s), 1e-9);
  // Megatron's mlp scope graphs dense MLPs only: an MoE block stays eager.
  EXPECT_DOUBLE_EQ(exposed(plan("layers", "[mlp]"), LayerPart::MlpF).host_s, exposed(plan("none"), LayerPart::MlpF).host_s);
  // No scope: the whole layer is graphed and the host costs nothing.
  EXPECT_DOUBLE_EQ(exposed(plan("layers"), LayerPart::MlpF).host_s, 0.0);
  EXPECT_DOUBLE_EQ(exposed(plan("layers", "[]"), LayerPart::AttnF).host_s, 0.0);
}

TEST(GraphScope, AScopeNeedsPerLayerGraphsAndAKnownName) {
  const auto error = [](std::vector<std::string> sets) {
    try {
      load_plan(default_config_path(), sets);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string unknown = error({"software.cuda_graphs=layers", "software.cuda_graph_scope=[attn, moe]"});
  EXPECT_NE(unknown.find("software.cuda_graph_scope"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("moe_preprocess"), std::string::npos) << unknown;  // names what is accepted
  const std::string unread = error({"software.cuda_graphs=none", "software.cuda_graph_scope=[attn]"});
  EXPECT_NE(unread.find("software.cuda_graph_scope"), std::string::npos) << unread;
  EXPECT_NE(unread.find("software.cuda_graphs"), std::string::npos) << unread;
  EXPECT_NE(error({"software.cuda_graphs=layers", "software.cuda_graph_scope=7"}).find("software.cuda_graph_scope"),
            std::string::npos);
  EXPECT_EQ(load_plan(default_config_path(), {"software.cuda_graphs=layers", "software.cuda_graph_scope=moe_router"})
                .software.cuda_graph_scope,
            kGraphMoeRouter);
}

}  // namespace
}  // namespace stepsim
