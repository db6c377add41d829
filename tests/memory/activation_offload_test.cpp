// Activation offloading (parallel.cpu_offload_layers, workloads/memory/activation_offload.hpp) against
// Transformer Engine's own statement of its schedule and closed forms: with layers 0 .. k-1 offloaded
// at most L - k layers' activations are on the GPU ("(num_layers - num_offloaded_layers) x T",
// get_cpu_offload_context's docstring, TE 2.10); a copy link far slower than the compute makes the
// step wait for every copy, k out and k back per microbatch, one after another.
#include <gtest/gtest.h>

#include "simulator/runs/child_run.hpp"
#include "tests/memory/memory_test_util.hpp"
#include "workloads/memory/activation_offload.hpp"
#include "workloads/memory/memory_estimate.hpp"

namespace stepsim::test {
namespace {

// Llama 3.1 8B (32 layers, vocabulary 128256) without a pipeline, one microbatch of 4 sequences of
// 8192 tokens in flight at a time, BF16, nothing recomputed (Megatron-LM offloads only then).
constexpr double kLayers = 32, kVocab = 128256, kTokens = 4 * 8192;
constexpr double kHeadPerToken = 6 * kVocab;  // BF16 logits + FP32 softmax, kept until the loss's backward

Plan offload_plan(int64_t layers, const std::string& host_link_GBps = "55.2") {
  return plan_with({"parallel.pp=1", "parallel.microbatches=2", "parallel.cpu_offload_layers=" + std::to_string(layers),
                    "hardware.host_link_GBps=" + host_link_GBps},
                   std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml");
}

// Without offloading the peak holds every layer's activations and the head's logits; one layer's
// share is what is left over the 32 layers.
double one_layer_bytes() {
  const MemoryRun none = simulate_memory(offload_plan(0));
  return (none.gpu(0).memory.activations_bytes - kTokens * kHeadPerToken) / kLayers;
}

TEST(ActivationOffload, AtMostTheLayersNotOffloadedStayOnTheGpu) {
  const double layer = one_layer_bytes();
  ASSERT_GT(layer, 0);
  for (const int64_t k : {1, 8, 20, 31}) {
    const Plan plan = offload_plan(k);
    const double expected = (kLayers - double(k)) * layer + kTokens * kHeadPerToken;
    const MemoryRun run = simulate_memory(plan);
    EXPECT_NEAR(run.gpu(0).memory.activations_bytes, expected, 1e-9 * expected) << k << " layers offloaded";
    // The static estimate (roofline, search) follows the same schedule.
    EXPECT_NEAR(estimate_memory(plan).activations_bytes, expected, 1e-9 * expected) << k;
  }
}

// The schedule itself, from TE's maps: layer i's copy done before forward L - k + i, its copy back
// started before backward L - 1 - k + i.
TEST(ActivationOffload, TransformerEnginesReleaseAndReloadPoints) {
  Plan p = offload_plan(20);
  const ActivationOffload o(p);
  EXPECT_TRUE(o.offloaded(0) && o.offloaded(19) && !o.offloaded(20));
  EXPECT_EQ(o.released_before_forward_of(12), 0);   // 32 - 20 + 0
  EXPECT_EQ(o.released_before_forward_of(31), 19);
  EXPECT_EQ(o.released_before_forward_of(11), -1);  // before it nothing has left
  EXPECT_EQ(o.reloaded_before_backward_of(11), 0);  // 32 - 1 - 20 + 0
  EXPECT_EQ(o.reloaded_before_backward_of(30), 19);
  EXPECT_EQ(o.reloaded_before_backward_of(31), -1);  // the last layer's backward reloads nothing
  // Layers of 1 byte, a head of 10: the most at once is 12 layers, or 12 + 10 at the head.
  EXPECT_EQ(o.peak_saved(std::vector<double>(32, 1.0), 10.0), 22.0);
  p.parallel.cpu_offload_layers = 0;
  EXPECT_EQ(ActivationOffload(p).peak_saved(std::vector<double>(32, 1.0), 10.0), 42.0);
  EXPECT_EQ(ActivationOffload(p).copy_wait_s(1, 2, 10), 0.0);
  // 4 layers, 2 offloaded, forward 1, backward 2, copies 10 (worked by hand): copy 0 runs 1-11,
  // copy 1 11-21; forward 2 waits for copy 0 (11), forward 3 for copy 1 (21): ends at 22, 18 late.
  // Backward 3 runs 0-2; before backward 2 the reload of layer 1 starts (2-12); before backward 1
  // layer 0's (12-22); backward 1 waits until 12, backward 0 until 22: ends at 24, 16 late.
  p.model.num_hidden_layers = 4;
  p.parallel.cpu_offload_layers = 2;
  EXPECT_EQ(ActivationOffload(p).copy_wait_s(1, 2, 10), 34.0);
  EXPECT_EQ(ActivationOffload(p).copy_wait_s(1, 2, 0.5), 0.0);  // each copy within a layer: hidden
}

struct StepWait {
  double step_s = 0, host_exposed_s = 0;
};

StepWait step_of(const Plan& plan) {
  return run_in_child_value<StepWait>([&] {
    SimOptions opt;
    opt.quiet = true;
    const SimResult r = simulate(plan, opt);
    const RankResult* crit = r.critical();
    return StepWait{r.step_time_s, crit ? crit->exposed_s[ops::CommClass::Host] : -1.0};
  });
}

// At 0.1 GB/s a layer's copy takes tens of seconds, against milliseconds of compute per layer: the
// forward waits for each of the k copies out in turn, the backward for each copy back, so the step
// grows by 2 x microbatches x k copies, each a layer's bytes over the link (what the compute could
// hide, under a second per microbatch here, is left in the tolerance).
TEST(ActivationOffload, ASlowLinkAddsEveryCopyToTheStep) {
  const double layer = one_layer_bytes(), microbatches = 2, k = 4, rate_Bps = 0.1e9;
  const double copy_s = layer / rate_Bps;
  ASSERT_GT(copy_s, 10.0);
  const StepWait none = step_of(offload_plan(0));
  const StepWait slow = step_of(offload_plan(int64_t(k), "0.1"));
  const double expected = 2 * microbatches * k * copy_s;
  EXPECT_NEAR(slow.step_s - none.step_s, expected, 0.02 * expected);
  EXPECT_NEAR(slow.host_exposed_s, expected, 0.02 * expected);  // reported as the host copies' wait
  EXPECT_EQ(none.host_exposed_s, 0.0);
}

// A copy shorter than a layer's forward keeps pace with the compute: copy i ends about i + 2 layers
// into the forward, long before layer L - k + i waits for it (and the backward's reloads have
// twice as long). A layer's forward is at least its GEMM FLOPs at the BF16 dense peak: 2 x tokens x
// (attention 4096 x (2 x 4096 + 2 x 1024) + MLP 3 x 4096 x 14336 weights) / 989 TFLOP/s.
TEST(ActivationOffload, ACopyShorterThanALayersForwardIsHidden) {
  const double layer_params = 4096.0 * (2 * 4096 + 2 * 1024) + 3 * 4096.0 * 14336;
  const double forward_at_least_s = 2 * kTokens * layer_params / 989e12;
  const double copy_s = one_layer_bytes() / 400e9;
  ASSERT_LT(copy_s, forward_at_least_s);
  const StepWait none = step_of(offload_plan(0));
  const StepWait hidden = step_of(offload_plan(12, "400"));
  EXPECT_NEAR(hidden.step_s, none.step_s, 1e-6 * none.step_s);
  EXPECT_EQ(hidden.host_exposed_s, 0.0);
}

}  // namespace
}  // namespace stepsim::test
