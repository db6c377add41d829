// Context parallelism's exchanges replayed (parallel.cp_comm_type; workloads/traffic/
// model_parallel_comm.hpp): p2p's ring runs beside cp - 1 of the cp attention steps, allgather's
// collectives around the core. Llama 3.1 8B on two GPUs of two nodes (CP 2 over the network), one
// sequence, speed of light, no latency, gradients reduced after the backward: the two types then
// differ only in what the ring hides, which is worked out here by hand.
#include <gtest/gtest.h>

#include "tests/simulator/sim_test_util.hpp"

namespace stepsim::test {
namespace {

constexpr double kSeq = 8192, kHeads = 32, kHeadDim = 128, kLayers = 32, kKvBytesPerToken = 8 * 256 * 2;

Plan cp_plan(const std::string& type, double ib_GBps) {
  return load_plan(std::string(STEPSIM_SOURCE_DIR) + "/workloads/llama-3.1-8b.yaml",
                   {"cluster.nodes=2", "cluster.gpus_per_node=1", "parallel.pp=1", "parallel.cp=2",
                    "parallel.cp_comm_type=" + type, "train.global_batch=1", "parallel.microbatches=1",
                    "sim.compute=speed-of-light", "parallel.overlap_grad_reduce=false", "hardware.ib_latency_s=0",
                    "hardware.nvlink_latency_s=0", "hardware.ib_GBps=" + num(ib_GBps)});
}

SimResult run(const Plan& plan) {
  return in_child([&] { return simulate(plan, SimOptions{true, false}); });
}

// The attention core of one layer on one GPU at the BF16 rate, forward or backward: S^2/2 causal
// query-key pairs, 2 FLOPs each per head dimension, QK^T and PV once forward, 3 and 2 times
// backward (FlashAttention's), the sequence split over CP 2.
double core_s(const Plan& p, bool backward) {
  const double qk = 2 * kSeq * kSeq / 2 * kHeads * kHeadDim, pv = qk;
  return (backward ? 3 * qk + 2 * pv : qk + pv) / 2 / (p.hardware.bf16_tflops * 1e12);
}

TEST(ContextParallelStep, P2pRingHidesTheAttentionBesideItsStepsWhenTheLinkIsSlow) {
  // At 1 GB/s a layer's K/V exchange (half the sequence's K and V: 16.8 MB, c) takes 17 ms against
  // under 1 ms of attention: every exchange sets the pace. allgather: forward c, backward c + c,
  // each after or before its core. p2p at CP 2 runs two steps a pass (Transformer Engine's loop):
  // forward, the local step's kernel beside the K/V exchange, the other step's after it: c + g/2;
  // backward, the local step beside the K/V exchange, then the other step beside the dK/dV
  // exchange that the first step's gradient feeds: c + max(c, g/2) = 2c. Both move 3c a layer, so
  // the steps differ by what the ring hides: half the forward core and all the backward one.
  const Plan gather = cp_plan("allgather", 1), ring = cp_plan("p2p", 1);
  const SimResult a = run(gather), b = run(ring);
  const double hidden = (0.5 * core_s(ring, false) + core_s(ring, true)) * kLayers;
  EXPECT_NEAR(a.step_time_s - b.step_time_s, hidden, 1e-6 * a.step_time_s);
  // And what both wait for on the CP stream is the bytes over the link, less what the ring hides.
  const double c_s = 0.5 * kSeq * kKvBytesPerToken / 1e9;
  EXPECT_NEAR(a.ranks[0].exposed_s[ops::CommClass::Cp], 3 * c_s * kLayers, 1e-6 * a.step_time_s);
  EXPECT_NEAR(b.ranks[0].exposed_s[ops::CommClass::Cp], 3 * c_s * kLayers - hidden, 1e-6 * a.step_time_s);
}

TEST(ContextParallelStep, P2pRingIsHiddenWhereTheAttentionOutlastsIt) {
  // At 10 TB/s the exchange (1.7 us forward) is far shorter than (cp - 1) / cp of the core beside
  // it: nothing waits on CP, while allgather still waits for all 3c of every layer.
  const SimResult a = run(cp_plan("allgather", 10000)), b = run(cp_plan("p2p", 10000));
  EXPECT_NEAR(b.ranks[0].exposed_s[ops::CommClass::Cp], 0.0, 1e-9);
  const double c_s = 0.5 * kSeq * kKvBytesPerToken / 1e13;
  EXPECT_NEAR(a.ranks[0].exposed_s[ops::CommClass::Cp], 3 * c_s * kLayers, 1e-3 * 3 * c_s * kLayers);
  EXPECT_NEAR(a.step_time_s - b.step_time_s, 3 * c_s * kLayers, 1e-3 * 3 * c_s * kLayers);
}

}  // namespace
}  // namespace stepsim::test
