// What the software profile owns in the per-op cost model, each against a closed form worked out
// here: the GPU's cost per kernel (software.kernel_launch_s), the host-bound launch model (an eager
// op of n kernels takes max(its GPU time, n x software.host_launch_s)), CUDA graphs (no host cost for
// the ops they hold) and fused memory-bound kernels (their bytes and kernel counts).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "simulator/config/config_loader.hpp"
#include "workloads/cost/part_cost.hpp"
#include "workloads/layers/layer_work.hpp"

namespace stepsim {
namespace {

const std::string kLlama = std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml";

// Llama 3.1 8B on one H100 (the file's preset), one 8192-token sequence per microbatch.
Plan llama(std::vector<std::string> sets) {
  for (const char* s : {"parallel.pp=1", "cluster.nodes=1", "cluster.gpus_per_node=8", "train.global_batch=8",
                        "parallel.microbatches=1"})
    sets.emplace_back(s);
  return load_plan(kLlama, sets);
}

constexpr double kTokens = 8192;

// A --set value that keeps every bit of `x` (std::to_string keeps 6 decimals).
std::string num(double x) {
  std::ostringstream o;
  o.precision(17);
  o << x;
  return o.str();
}

cost::ClassSeconds attention_forward(const Plan& p) {
  return cost::part_seconds(p, layer_work(p, 3, 1.0, 0).part(LayerPart::AttnF), {kTokens, 0, 1}).all();
}

TEST(LaunchModel, AdditiveGpuCostIsKernelsTimesTheProfilesCost) {
  // The attention forward's kernels: q, k-v and output projections, the attention core, norm, RoPE,
  // residual add: 7.
  const Plan p = llama({"software.kernel_launch_s=1e-5", "software.host_launch_s=0"});
  const cost::ClassSeconds s = attention_forward(p);
  EXPECT_EQ(s.kernels, 7);
  EXPECT_NEAR(s.launch, 7 * 1e-5, 1e-15);
}

TEST(LaunchModel, AnEagerOpRunsAtTheHostsPaceWhenItsKernelsAreShorter) {
  // No GPU-side cost: the op's GPU time is its work, W. A host slower than W / 7 per kernel sets
  // the op's time to 7 x host exactly; a faster one is hidden and costs nothing.
  const Plan gpu_only = llama({"software.kernel_launch_s=0", "software.host_launch_s=0"});
  const double work = attention_forward(gpu_only).total();
  ASSERT_GT(work, 0);
  const double slow_host = 2 * work / 7;
  const Plan host_bound = llama({"software.kernel_launch_s=0", "software.host_launch_s=" + num(slow_host)});
  const cost::ClassSeconds s = attention_forward(host_bound);
  EXPECT_NEAR(s.total(), 7 * slow_host, 1e-12);
  EXPECT_NEAR(s.launch, 7 * slow_host - work, 1e-12);
  const Plan hidden = llama({"software.kernel_launch_s=0", "software.host_launch_s=" + num(work / 14)});
  EXPECT_NEAR(attention_forward(hidden).launch, 0, 1e-15);
  // Both together: max(W + 7 g, 7 h).
  const double g = 1e-5;
  const Plan both = llama({"software.kernel_launch_s=" + num(g), "software.host_launch_s=" + num(slow_host)});
  EXPECT_NEAR(attention_forward(both).total(), std::max(work + 7 * g, 7 * slow_host), 1e-12);
}

TEST(LaunchModel, CudaGraphsHoldTheLayersOrTheWholeIteration) {
  // 10 ms per kernel (the largest host_launch_s accepted): 9 of them outlast the head's forward
  // (about 25 ms on one H100), 7 the attention's, so what the host launches is host-bound.
  const double host = 0.01;
  const auto plan = [&](const char* graphs) {
    return llama({"software.kernel_launch_s=0", "software.host_launch_s=" + num(host),
                  std::string("software.cuda_graphs=") + graphs});
  };
  const HeadWork head = lm_head_passes(plan("none"), 1.0);
  // The head's forward: the logits GEMM, the final norm, the 7 kernels of the unfused cross-entropy.
  const auto head_forward = [&](const Plan& p) { return cost::part_seconds(p, head.forward, {kTokens, 0, 1}, cost::OpScope::Head).all(); };
  EXPECT_NEAR(attention_forward(plan("none")).total(), 7 * host, 1e-9);
  EXPECT_NEAR(head_forward(plan("none")).total(), 9 * host, 1e-9);
  // Per-layer graphs: the layers' kernels cost the host nothing, the head stays eager.
  const Plan no_host = llama({"software.kernel_launch_s=0", "software.host_launch_s=0"});
  EXPECT_NEAR(attention_forward(plan("layers")).total(), attention_forward(no_host).total(), 1e-15);
  EXPECT_NEAR(head_forward(plan("layers")).total(), 9 * host, 1e-9);
  // Full-iteration graphs: the head too; the optimizer step stays eager (4 kernels).
  EXPECT_NEAR(head_forward(plan("full_iteration")).total(), head_forward(no_host).total(), 1e-15);
  EXPECT_NEAR(cost::optimizer_seconds(plan("full_iteration"), 1e6, 1e5).total(), 4 * host, 1e-9);
}

TEST(LaunchModel, FusedCrossEntropyReadsTheLogitsTwiceAndWritesItsGradientOnce) {
  const Plan fused = llama({"software.fused.cross_entropy=true"});
  const HeadWork w = lm_head_passes(fused, 1.0);
  const double v = 128256, h = 4096, bw = 3350e9 * 0.896;
  // Forward: final norm (4 h) and 2 + 2 + 2 bytes per logit; backward: 2 + 2 per logit, the norm's 6 h.
  EXPECT_NEAR(cost::part_seconds(fused, w.forward, {kTokens, 0, 1}, cost::OpScope::Head).all().memory,
              kTokens * (4 * h + 6 * v) / bw, 1e-12);
  EXPECT_NEAR(cost::part_seconds(fused, w.input_grad, {kTokens, 0, 1}, cost::OpScope::Head).all().memory,
              kTokens * (6 * h + 4 * v) / bw, 1e-12);
  EXPECT_EQ(cost::part_seconds(fused, w.forward, {kTokens, 0, 1}, cost::OpScope::Head).all().kernels, 1 + 1 + 2);
}

TEST(LaunchModel, FusedNormCastWritesTheQuantisedInputFromTheNormKernel) {
  // FP8 attention forward of Llama 3.1 8B: unfused, the norm (read and write BF16 h: 4 h) and a
  // cast of h (read 2 h, write h FP8 + a 4-byte scale per 128) beside the output projection's;
  // fused, the norm reads 2 h and writes the FP8 h: 4 h - (2 h + 2 h) ... saving 4 h per token.
  const Plan unfused = llama({"train.precision=fp8"});
  const Plan fused = llama({"train.precision=fp8", "software.fused.norm_cast=true"});
  const double h = 4096, bw = 3350e9 * 0.896;
  EXPECT_NEAR(attention_forward(unfused).memory - attention_forward(fused).memory, kTokens * 4 * h / bw, 1e-12);
  EXPECT_EQ(attention_forward(unfused).kernels - attention_forward(fused).kernels, 1);
}

}  // namespace
}  // namespace stepsim
